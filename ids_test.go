package switchboard

import (
	"strings"
	"testing"
	"time"
)

// TestOrderedIDsSortByTime: an ordered ID made later sorts after one made earlier, as a
// string, whatever their random parts; and it has NewID's shape (prefix, 26 characters
// of the same alphabet), so nothing that takes an ID can tell them apart.
func TestOrderedIDsSortByTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for i := range 1000 {
		earlier, later := NewOrderedID("aud", base), NewOrderedID("aud", base.Add(time.Duration(i+1)*time.Millisecond))
		if earlier >= later {
			t.Fatalf("ID of %v (%s) does not sort before the one %d ms later (%s)", base, earlier, i+1, later)
		}
	}
	id, plain := NewOrderedID("aud", time.Now()), NewID("aud")
	if len(id) != len(plain) || !strings.HasPrefix(id, "aud_") {
		t.Errorf("ordered ID %q has not NewID's shape (%q)", id, plain)
	}
	if strings.Trim(id[len("aud_"):], "0123456789abcdefghjkmnpqrstvwxyz") != "" {
		t.Errorf("ordered ID %q has characters outside NewID's alphabet", id)
	}
	if a, b := NewOrderedID("aud", base), NewOrderedID("aud", base); a == b {
		t.Errorf("two IDs of the same millisecond are equal (%s): the random part is missing", a)
	}
}
