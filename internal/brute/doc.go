// Package brute is a brute-force oracle for small programs: it enumerates
// every reachable state of a program with [schedule.Machine], the
// executable semantics that judges witnesses, and reports the finding
// families of docs/SEMANTICS.md that some execution exhibits.
//
// It shares no algorithm with package verify or with the explorer
// (verify/explore): no partial-order reduction, no clocks. States are
// merged only when [schedule.State.Key] agrees, which fixes the state and
// its happens-before relation, and every finding is judged by the
// machine's own happens-before queries or by [schedule.CheckWitness]. It
// is exponential and meant for tests on programs of a few dozen steps.
package brute
