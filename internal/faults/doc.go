// Package faults switches on deliberately wrong verifiers, to prove that
// the corpus catches subtle verifier bugs.
//
// Each [Variant] is one bug that a verifier could plausibly have (a
// relaxed signal taken as a release, a one-byte overlap missed, a barrier
// generation off by one, ...). Package verify calls [On] at the one place
// where each bug would live, as a one-line hook. In a normal build On is a
// constant false function, inlined and folded away with the code it guards,
// so the hooks cost nothing. Built with the megaproof_faults tag
// (`go build -tags megaproof_faults`), On reports whether the variant
// chosen with [Set] is v: the corpus's fault-variant test builds that
// binary, runs the corpus under every variant and requires each one to be
// caught (some entry gives a false accept, a false reject, another code or
// a witness that does not replay).
//
// # Variants
//
// [Variants] lists them with their documentation, in a fixed order; the
// names are stable. docs/FAULTS.md of the module tabulates how many corpus
// entries each one flips.
package faults
