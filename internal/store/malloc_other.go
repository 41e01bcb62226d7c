//go:build !linux || !cgo

package store

func limitMallocArenas(int) bool { return false }
