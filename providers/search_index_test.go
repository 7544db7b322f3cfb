package providers

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

func searchEntries(desc string) []SearchEntry {
	return []SearchEntry{
		{Name: "gmail_send_message", Title: "Send an email", Description: desc,
			Input: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","description":"Recipient address"}}}`)},
		{Name: "slack_post_message", Title: "Post a message", Description: "Posts a message to a Slack channel.",
			Input: json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string"}}}`)},
	}
}

// TestIndexesShareTheWordsOfTheSameTool: two indexes of the same tools (two tenants'
// scopes over the shared catalog) hold one copy of each tool's words, a changed tool
// gets its own, searches answer alike, and the shared words go once no index holds
// them.
func TestIndexesShareTheWordsOfTheSameTool(t *testing.T) {
	a := NewSearchIndex(searchEntries("Sends an email from the connected mailbox."))
	b := NewSearchIndex(searchEntries("Sends an email from the connected mailbox."))
	if a.docs[0].words != b.docs[0].words || a.docs[1].words != b.docs[1].words {
		t.Fatal("two indexes of the same tools each built their own words")
	}
	c := NewSearchIndex(searchEntries("Sends an email, with attachments, from the connected mailbox."))
	if c.docs[0].words == a.docs[0].words || c.docs[1].words != a.docs[1].words {
		t.Error("a changed tool shares the words of its old version, or an unchanged one does not")
	}
	if !slices.Equal(a.Search("send email", 5), b.Search("send email", 5)) || len(a.Search("send email", 5)) == 0 ||
		a.Search("send email", 5)[0].Name != "gmail_send_message" || len(c.Search("attachments", 5)) != 1 {
		t.Errorf("searches: %v, %v, %v", a.Search("send email", 5), b.Search("send email", 5), c.Search("attachments", 5))
	}
	key := entryDigest(searchEntries("Sends an email, with attachments, from the connected mailbox.")[0])
	if _, ok := sharedWords.Load(key); !ok {
		t.Fatal("the changed tool's words are not shared")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	c = nil
	testwait.Until(t, "the words of a tool no index holds to be dropped", func() bool {
		runtime.GC()
		_, ok := sharedWords.Load(key)
		return !ok
	})
}
