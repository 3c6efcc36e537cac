package explore

import (
	"context"
	"fmt"
)

// The memory bound is documented in doc.go, section Memory: every byte an
// exploration keeps for long is reserved here before it is allocated.

// DefaultMaxMemory is the memory budget when [Config].MaxMemory is 0.
const DefaultMaxMemory = 512 << 20

// chunkBytes is the size of one block of visited keys.
const chunkBytes = 1 << 20

// Limit names the bound that left a [Result] incomplete.
type Limit uint8

// The bounds of [Run].
const (
	// LimitNone: nothing stopped the explorations (Complete is true).
	LimitNone Limit = iota
	// LimitStates: Config.MaxStates states were visited.
	LimitStates
	// LimitMemory: the next state or witness would have taken more than
	// Config.MaxMemory bytes.
	LimitMemory
	// LimitSize: the program is larger than the explorer takes at all (its
	// state key would exceed the key bound); it was not explored.
	LimitSize
	// LimitContext: the context ended.
	LimitContext
)

var limitNames = [...]string{LimitNone: "none", LimitStates: "states", LimitMemory: "memory", LimitSize: "size", LimitContext: "context"}

// String returns "none", "states", "memory", "size" or "context".
func (l Limit) String() string {
	if int(l) < len(limitNames) {
		return limitNames[l]
	}
	return fmt.Sprintf("Limit(%d)", uint8(l))
}

// budget is the state and memory budget and the context shared by the
// explorations of one Run.
type budget struct {
	ctx       context.Context
	maxStates int
	maxMem    int64
	used      int   // states visited
	mem       int64 // bytes reserved now
	peak      int64 // the most bytes reserved at once
	limit     Limit // the bound that stopped the explorations, if any
	ctxErr    error
	pool      [][]byte // key chunks of finished explorations, for reuse
}

func newBudget(ctx context.Context, cfg Config) *budget {
	return &budget{ctx: ctx, maxStates: cfg.MaxStates, maxMem: cfg.MaxMemory}
}

// stopped reports whether some bound ended the explorations.
func (b *budget) stopped() bool { return b.limit != LimitNone }

// take counts one new state, or reports false when a bound is reached.
func (b *budget) take() bool {
	if b.stopped() {
		return false
	}
	b.used++
	if b.used > b.maxStates {
		b.used = b.maxStates
		b.limit = LimitStates
		return false
	}
	if b.used&1023 == 0 {
		if err := b.ctx.Err(); err != nil {
			b.ctxErr = err
			b.limit = LimitContext
			return false
		}
	}
	return true
}

// reserve takes n bytes from the memory budget, or reports false (and
// stops every exploration) when they do not fit.
func (b *budget) reserve(n int64) bool {
	if b.mem+n > b.maxMem {
		if !b.stopped() {
			b.limit = LimitMemory
		}
		return false
	}
	b.mem += n
	b.peak = max(b.peak, b.mem)
	return true
}

// release gives n bytes back.
func (b *budget) release(n int64) { b.mem -= n }

// chunk returns a key chunk of chunkBytes (or n bytes, when larger), from
// the pool when it holds one, after reserving it.
func (b *budget) chunk(n int) []byte {
	n = max(n, chunkBytes)
	if !b.reserve(int64(n)) {
		return nil
	}
	for i := len(b.pool) - 1; i >= 0; i-- {
		if c := b.pool[i]; cap(c) >= n {
			b.pool = append(b.pool[:i], b.pool[i+1:]...)
			return c[:n]
		}
	}
	return make([]byte, n)
}

// pooled reports whether the pool holds a chunk of n bytes or more.
func (b *budget) pooled(n int) bool {
	for _, c := range b.pool {
		if cap(c) >= n {
			return true
		}
	}
	return false
}

// reason says in words which bound stopped the explorations.
func (b *budget) reason() string {
	switch b.limit {
	case LimitStates:
		return fmt.Sprintf("the state budget of %d states ran out", b.maxStates)
	case LimitMemory:
		return fmt.Sprintf("the memory budget of %s ran out after %d states", bytesText(b.maxMem), b.used)
	case LimitContext:
		return fmt.Sprintf("the context ended after %d states: %v", b.used, b.ctxErr)
	}
	return ""
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
