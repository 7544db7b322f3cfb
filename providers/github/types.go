package github

// ghUser is a GitHub user as it appears inside other objects ("simple-user").
type ghUser struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

// ghLabel is a label of an issue or pull request.
type ghLabel struct {
	Name string `json:"name"`
}

// ghMilestone is the milestone of an issue or pull request.
type ghMilestone struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

// login returns the user's login, or "" for a missing (deleted, "ghost") user.
func login(u *ghUser) string {
	if u == nil {
		return ""
	}
	return u.Login
}

// logins returns the users' logins, never nil.
func logins(us []ghUser) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.Login)
	}
	return out
}

// labelNames returns the labels' names, never nil.
func labelNames(ls []ghLabel) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// milestoneTitle returns the milestone's title, or nil when there is none.
func milestoneTitle(m *ghMilestone) *string {
	if m == nil {
		return nil
	}
	return &m.Title
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
