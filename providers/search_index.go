package providers

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"weak"
)

// SearchEntry is one tool as a search index reads it.
type SearchEntry struct {
	Name        string
	Title       string
	Description string
	Input       json.RawMessage // its input schema: parameter names and descriptions are indexed
}

// SearchHit is one tool a search found, best first.
type SearchHit struct {
	Name  string
	Score float64
}

// SearchIndex holds each tool's words, weighted by where they appear: the name counts
// most, then the title and description, then the parameters. It is read-only once
// built and safe for concurrent searches.
type SearchIndex struct {
	docs  []searchDoc
	vocab []string // every indexed word, sorted, for prefix matches
}

type searchDoc struct {
	name  string
	words *toolWords
}

// toolWords are a tool's indexed words with their weights. They depend on its entry
// alone, so the indexes that hold the same tool (every tenant's scope lists the same
// catalog tools) share them: see sharedWords.
type toolWords struct {
	weights map[string]float64
}

// sharedWords holds the words of every tool some index holds, by a digest of its
// entry, for as long as one does (a weak pointer, whose entry goes when the words are
// collected).
var sharedWords sync.Map // [sha256.Size]byte -> weak.Pointer[toolWords]

// wordsOf returns the words of e, shared with any index that holds the same tool.
func wordsOf(e SearchEntry) *toolWords {
	key := entryDigest(e)
	var built *toolWords
	for {
		v, ok := sharedWords.Load(key)
		if ok {
			if w := v.(weak.Pointer[toolWords]).Value(); w != nil {
				return w
			}
		}
		if built == nil {
			built = indexWords(e)
		}
		wp := weak.Make(built)
		// Store the words unless another index stored live ones meanwhile.
		if ok && !sharedWords.CompareAndSwap(key, v, wp) || !ok && !storeNew(key, wp) {
			continue
		}
		runtime.AddCleanup(built, func(key [sha256.Size]byte) { sharedWords.CompareAndDelete(key, wp) }, key)
		return built
	}
}

func storeNew(key [sha256.Size]byte, wp weak.Pointer[toolWords]) bool {
	_, loaded := sharedWords.LoadOrStore(key, wp)
	return !loaded
}

// indexWords reads e's words: those of its name weigh most, then its title and
// description, then its parameters' names and descriptions.
func indexWords(e SearchEntry) *toolWords {
	w := &toolWords{weights: map[string]float64{}}
	add := func(text string, weight float64) {
		for _, word := range words(text) {
			w.weights[word] = max(w.weights[word], weight)
		}
	}
	add(e.Name, weightName)
	add(e.Title, weightTitle)
	add(e.Description, weightDescription)
	for _, p := range schemaParameters(e.Input) {
		add(p, weightParameter)
	}
	return w
}

// entryDigest identifies an entry by all it indexes.
func entryDigest(e SearchEntry) [sha256.Size]byte {
	h := sha256.New()
	for _, part := range []string{e.Name, e.Title, e.Description, string(e.Input)} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// Field weights of the search: a word of the tool's name counts more than one of its
// description, which counts more than one of a parameter.
const (
	weightName        = 5
	weightTitle       = 3
	weightDescription = 2
	weightParameter   = 1
)

// NewSearchIndex indexes the entries.
func NewSearchIndex(entries []SearchEntry) *SearchIndex {
	idx := &SearchIndex{docs: make([]searchDoc, 0, len(entries))}
	for _, e := range entries {
		idx.docs = append(idx.docs, searchDoc{name: e.Name, words: wordsOf(e)})
	}
	seen := map[string]bool{}
	for _, d := range idx.docs {
		for w := range d.words.weights {
			if !seen[w] {
				seen[w] = true
				idx.vocab = append(idx.vocab, w)
			}
		}
	}
	slices.Sort(idx.vocab)
	return idx
}

// withPrefix returns the indexed words that start with q and are longer than it.
func (idx *SearchIndex) withPrefix(q string) []string {
	i, _ := slices.BinarySearch(idx.vocab, q)
	var out []string
	for ; i < len(idx.vocab) && strings.HasPrefix(idx.vocab[i], q); i++ {
		if idx.vocab[i] != q {
			out = append(out, idx.vocab[i])
		}
	}
	return out
}

// schemaParameters returns the names and descriptions of a schema's properties, nested
// ones included.
func schemaParameters(raw json.RawMessage) []string {
	var schema map[string]any
	if json.Unmarshal(raw, &schema) != nil {
		return nil
	}
	var out []string
	var walk func(s map[string]any, depth int)
	walk = func(s map[string]any, depth int) {
		if depth > 4 {
			return
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out = append(out, name)
			ps, _ := p.(map[string]any)
			if d, ok := ps["description"].(string); ok {
				out = append(out, d)
			}
			walk(ps, depth+1)
			if items, ok := ps["items"].(map[string]any); ok {
				walk(items, depth+1)
			}
		}
	}
	walk(schema, 0)
	return out
}

// stopWord reports whether w is left out of the index and of queries: such words
// match everything.
func stopWord(w string) bool {
	switch w {
	case "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "by", "is", "it", "as", "at", "from", "this", "that":
		return true
	}
	return false
}

// words splits text into lower-case words, breaking snake_case and camelCase, without
// stop words.
func words(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 && !stopWord(b.String()) {
			out = append(out, b.String())
		}
		b.Reset()
	}
	prevLower := false
	for _, r := range text {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return out
}

// Search scores every tool against the query's words (a word matches a tool's word
// exactly, or as its prefix for half the weight) and returns at most limit, the best
// first, ties by name.
func (idx *SearchIndex) Search(query string, limit int) []SearchHit {
	qs := words(query)
	type scored struct {
		i     int
		score float64
	}
	prefixed := make([][]string, len(qs))
	for j, q := range qs {
		if len(q) >= 3 {
			prefixed[j] = idx.withPrefix(q)
		}
	}
	var hits []scored
	for i, d := range idx.docs {
		score := 0.0
		for j, q := range qs {
			best := d.words.weights[q]
			if best == 0 {
				for _, w := range prefixed[j] {
					best = max(best, d.words.weights[w]/2)
				}
			}
			score += best
		}
		if score > 0 {
			hits = append(hits, scored{i, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(idx.docs[a.i].name, idx.docs[b.i].name)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]SearchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, SearchHit{Name: idx.docs[h.i].name, Score: h.score})
	}
	return out
}
