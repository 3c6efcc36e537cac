package runner

import (
	"runtime"
	"sync"
)

// parallelFor runs f over [0, n) in chunks of at least grain, on all CPUs.
func parallelFor(n, grain int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if n <= grain || w == 1 {
		f(0, n)
		return
	}
	chunk := max(grain, (n+w-1)/w)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
