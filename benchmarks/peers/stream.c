// Memory-bandwidth probe: STREAM-like copy and triad, bytes read + written / time, best of 10.
// Build and run: gcc -O3 -march=native -fopenmp stream.c -o stream && ./stream
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#define N (1L<<26)
int main(void){
  double *a=aligned_alloc(64,N*8),*b=aligned_alloc(64,N*8),*c=aligned_alloc(64,N*8);
  #pragma omp parallel for
  for(long i=0;i<N;i++){a[i]=1;b[i]=2;c[i]=0;}
  double best_copy=1e9,best_triad=1e9;
  for(int r=0;r<10;r++){
    double t=omp_get_wtime();
    #pragma omp parallel for
    for(long i=0;i<N;i++) c[i]=a[i];
    t=omp_get_wtime()-t; if(t<best_copy)best_copy=t;
    t=omp_get_wtime();
    #pragma omp parallel for
    for(long i=0;i<N;i++) a[i]=b[i]+3.0*c[i];
    t=omp_get_wtime()-t; if(t<best_triad)best_triad=t;
  }
  printf("threads=%d copy %.1f GB/s triad %.1f GB/s\n",omp_get_max_threads(),2.0*N*8/best_copy/1e9,3.0*N*8/best_triad/1e9);
  return 0;
}
