//go:build !unix

package main

import "os"

// openDocument opens a file to read.
func openDocument(name string) (*os.File, error) { return os.Open(name) }
