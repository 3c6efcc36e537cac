//go:build unix

package main

import (
	"os"
	"syscall"
)

// openDocument opens a file to read. os.Open would also try to register
// the descriptor with the runtime's poller, which a regular file refuses
// (four system calls for nothing, per file of a batch); a descriptor from
// open(2) given to os.NewFile is only checked to be blocking.
func openDocument(name string) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), name), nil
		case syscall.EINTR:
			continue
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
}
