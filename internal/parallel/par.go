// Package parallel runs independent pieces of work on several goroutines, for
// the phases of the compiler that parallelize over functions or chunks.
package parallel

import (
	"runtime"
	"sync"
)

// Do calls fn(0) … fn(n-1), on at most workers goroutines (at most one
// per processor), and returns when every call has returned. The calls
// must be independent: they may run in any order and at once. With one
// worker, or n below 2, the calls run in order on this goroutine.
func Do(n, workers int, fn func(i int)) {
	workers = min(workers, runtime.GOMAXPROCS(0), n)
	if workers < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
