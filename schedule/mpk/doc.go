// Package mpk reads Mirage Persistent Kernel (MPK) task graphs.
package mpk
