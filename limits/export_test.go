package limits

import "time"

// RememberedKeys is how many missing keys k holds, for tests of its bound.
func RememberedKeys(k *KeyMisses) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.missing.len()
}

// LocalWithClock is a Local whose time is now's.
func LocalWithClock(now func() time.Time) *Local {
	l := NewLocal()
	l.now = now
	return l
}

// LocalKeys is how many keys l holds, for tests of its sweep.
func LocalKeys(l *Local) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
