package tenants

// PasswordChecks is how many password hash comparisons s has made, for tests that
// check the throttles keep bcrypt from running.
func PasswordChecks(s *Store) int64 { return s.pwChecks.Load() }
