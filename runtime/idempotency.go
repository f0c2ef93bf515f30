package runtime

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
)

// errJournalLocked says why a journal in use cannot be opened.
var errJournalLocked = fmt.Errorf("%w: another process (or another open Journal) holds its lock; wait for that run to end, or use another --journal file", ErrJournalInUse)

// NewRunID returns a new random run id: 32 hex digits (128 bits from
// crypto/rand), unique across runs for every practical purpose.
func NewRunID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the systems Go supports; a run
		// without a unique id would hand tools colliding keys.
		panic("runtime: no randomness for a run id: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// runIdentity is what a run's idempotency keys derive from, shared by
// the run and its parallel branches.
type runIdentity struct {
	once        sync.Once
	id          string // the run id; "" until first needed (a run without journal draws it then)
	programHash string
}

// keyIdentity returns the run's identity (run id and program hash),
// shared with its branches, making it on first use: the run id is the
// journal's, else RunOptions.RunID, else drawn when the first key needs
// it.
func (r *Run) keyIdentity() *runIdentity {
	if r.keyIdent == nil {
		ri := &runIdentity{id: r.runIDOpt, programHash: r.progHash}
		if r.j != nil && r.j.runID != "" {
			ri.id = r.j.runID
		}
		if ri.programHash == "" {
			ri.programHash = programHashOf(r.progName)
		}
		r.keyIdent = ri
	}
	return r.keyIdent
}

// RunID returns the run's id (see RunOptions.RunID).
func (r *Run) RunID() string { return r.keyIdentity().runID() }

func (ri *runIdentity) runID() string {
	ri.once.Do(func() {
		if ri.id == "" {
			ri.id = NewRunID()
		}
	})
	return ri.id
}

// IdempotencyKey derives the idempotency key of one attempt of an effect:
// the hex sha256 of
//
//	"genesis-idempotency-v1\n" runID "\n" programHash "\n" step "\n" attempt
//
// where step is the step's identity (docs/runtime.md "Step identity":
// site, loop iterations, call path, occurrence) and attempt counts from
// 1. Equal inputs give equal keys — the same attempt of the same step of
// the same run, in whichever process resumes it — and any difference
// gives another key.
func IdempotencyKey(runID, programHash, step string, attempt int) string {
	h := sha256.New()
	b := make([]byte, 0, 96+len(runID)+len(programHash)+len(step))
	b = append(b, "genesis-idempotency-v1\n"...)
	b = append(b, runID...)
	b = append(b, '\n')
	b = append(b, programHash...)
	b = append(b, '\n')
	b = append(b, step...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(attempt), 10)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// IdempotencyKey returns the key of this attempt (IdempotencyKey of the
// run's id, its program hash, the step's identity and the attempt), ""
// for a Call that belongs to no run. Providers send it with the request
// (ExecTools in the request line, OpenAI as the Idempotency-Key header),
// so that a service can recognise a request it has already served: the
// call in flight when a run was killed is made again by the resumed run
// with the same key.
func (c *Call) IdempotencyKey() string {
	if c == nil || c.run == nil {
		return ""
	}
	if c.key == "" {
		ri := c.run.keyIdentity()
		c.key = IdempotencyKey(ri.runID(), ri.programHash, c.Step, c.Attempt)
	}
	return c.key
}

type callCtxKey struct{}

// withCall returns ctx carrying a copy of call c, for Go tools.
func withCall(ctx context.Context, c *Call) context.Context {
	cc := *c
	return context.WithValue(ctx, callCtxKey{}, &cc)
}

// CallFromContext returns the call a Go tool (ToolFunc) is serving:
// its step identity, attempt and IdempotencyKey. ok is false outside a
// tool call.
func CallFromContext(ctx context.Context) (c *Call, ok bool) {
	c, ok = ctx.Value(callCtxKey{}).(*Call)
	return c, ok
}

// IdempotencyKeyFrom returns the idempotency key of the call a Go tool
// serves (see Call.IdempotencyKey), "" outside a tool call.
func IdempotencyKeyFrom(ctx context.Context) string {
	c, ok := CallFromContext(ctx)
	if !ok {
		return ""
	}
	return c.IdempotencyKey()
}

// programHashOf is the program hash of a run whose options give none: the
// sha256 of its program identity.
func programHashOf(program string) string {
	sum := sha256.Sum256([]byte("genesis-program\n" + program))
	return hex.EncodeToString(sum[:])
}
