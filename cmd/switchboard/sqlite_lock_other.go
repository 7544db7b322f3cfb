//go:build !unix

package main

import "os"

// tryLock takes no lock where flock does not exist: the refusal to share a SQLite
// database is made on Unix systems only.
func tryLock(*os.File) error { return nil }

// unlock releases tryLock's lock.
func unlock(*os.File) error { return nil }
