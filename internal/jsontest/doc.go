// Package jsontest rewrites JSON documents into equivalent spellings for
// the readers' tests: [EscapeAll] writes every key and string as \u
// escapes, so that a test can require a reader to give the same program
// for both spellings ([SameWhenEscaped]) and find a key repeated under
// another spelling ([DuplicateAt]).
package jsontest
