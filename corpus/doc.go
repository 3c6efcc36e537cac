// Package corpus is megaproof's regression corpus.
package corpus
