package limits

// table is a map bounded to max entries. When it is full, entries that idle says may
// go are dropped first (forgetting them changes nothing), then arbitrary ones, an
// eighth of the table at a time, so a flood of new keys costs memory only up to max.
type table[V any] struct {
	m   map[string]V
	max int
}

func newTable[V any](max int) *table[V] {
	return &table[V]{m: map[string]V{}, max: max}
}

func (t *table[V]) get(k string) (V, bool) {
	v, ok := t.m[k]
	return v, ok
}

// put stores v under k, making room first when the table is full.
func (t *table[V]) put(k string, v V, idle func(V) bool) {
	if _, ok := t.m[k]; !ok && len(t.m) >= t.max {
		for key, old := range t.m {
			if idle(old) {
				delete(t.m, key)
			}
		}
		for key := range t.m {
			if len(t.m) < t.max-t.max/8 {
				break
			}
			delete(t.m, key)
		}
	}
	t.m[k] = v
}

func (t *table[V]) remove(k string) { delete(t.m, k) }

func (t *table[V]) len() int { return len(t.m) }
