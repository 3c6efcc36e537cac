package verify

import "strconv"

// msg builds a finding's message by appending, as fmt.Sprintf would
// render it (s for %s, q for %q, i and u for %d), in one allocation for
// the final string: messages are built for every finding, and tiny
// programs are nearly all findings.
type msg []byte

// newMsg returns an empty message with room for a usual one.
func newMsg() msg { return make(msg, 0, 256) }

func (m msg) s(x string) msg { return append(m, x...) }
func (m msg) q(x string) msg { return strconv.AppendQuote(m, x) }
func (m msg) i(x int64) msg  { return strconv.AppendInt(m, x, 10) }
func (m msg) u(x uint64) msg { return strconv.AppendUint(m, x, 10) }
func (m msg) String() string { return string(m) }
