"""Device-to-device copies at W8's sizes: what a kernel moving W8's bytes reaches at that length
(float16 W8 moves 2 x 200 MB, float32 W8 2 x 400 MB), wall time per call up to synchronize as
the harness times arrayc, and CUDA-event device time."""
import time, torch
def wall_ms(fn, reps=50, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append((time.perf_counter() - t) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
def ev_ms(fn, reps=50, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
print(torch.cuda.get_device_name(0), torch.__version__)
for n, dt in ((1 << 29, torch.float32), (100_000_000, torch.float32), (100_000_000, torch.float16)):
    x = torch.ones(n, dtype=dt, device="cuda"); y = torch.empty_like(x)
    b = 2 * n * x.element_size()
    for name, f in (("wall+sync", wall_ms), ("events", ev_ms)):
        ms = f(lambda: y.copy_(x))
        print(f"copy {n:>10d} {str(dt)[6:]:8s} {b/1e6:7.0f} MB moved  {name:9s} {ms:8.4f} ms  {b/ms/1e6:6.0f} GB/s")
