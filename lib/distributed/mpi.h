// MPI, the processes of a job started by mpirun: loaded at run time (dlopen of OpenMPI's
// libmpi.so.40, or ARRAYC_MPI_LIBRARY), so that one build runs without MPI installed; using
// it then raises arrayc::Error saying why. MPI is initialized on first use (with
// MPI_THREAD_MULTIPLE where the library offers it) and finalized at exit. Errors are returned,
// not fatal (MPI_ERRORS_RETURN), and become arrayc::Error. Collectives are started nonblocking
// and polled: one that another process never joins raises arrayc::Error after
// ARRAYC_COLLECTIVE_TIMEOUT seconds instead of hanging. OpenMPI's ABI: its handles are the
// addresses of its predefined objects (ompi_mpi_comm_world, ompi_mpi_float, ...).
#pragma once
#include <cstddef>
#include <string>

#include "arrayc/dtype.h"

namespace arrayc::detail::mpi {

enum class Op { Sum, Prod, Max, Min };

int rank();  // this process's rank in MPI_COMM_WORLD (initializes MPI)
int size();  // the number of processes

// Collectives over MPI_COMM_WORLD on host memory; `what` names the operation in errors.
// all_reduce: count elements in, count out (send may equal recv). all_gather: count per rank,
// size()*count out. reduce_scatter: size()*count in, count out. broadcast: in place, from root.
void all_reduce(const void* send, void* recv, size_t count, DType t, Op op, const std::string& what);
void all_gather(const void* send, void* recv, size_t count, DType t, const std::string& what);
void reduce_scatter(const void* send, void* recv, size_t count, DType t, Op op, const std::string& what);
void broadcast(void* buf, size_t bytes, int root, const std::string& what);
void barrier(const std::string& what);

}  // namespace arrayc::detail::mpi
