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

// NewAdmissionWithClock is NewAdmission whose time is now's.
func NewAdmissionWithClock(o AdmissionOptions, now func() time.Time) *Admission {
	a := NewAdmission(o)
	a.now = now
	return a
}

// ActiveTenants is how many tenants a remembers as having asked for a place lately.
func ActiveTenants(a *Admission) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// AwayAt is how many calls are away at upstream and how many wait to go.
func AwayAt(a *Admission, upstream string) (away, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g := a.gates[upstream]; g != nil {
		return g.away, len(g.queue)
	}
	return 0, 0
}
