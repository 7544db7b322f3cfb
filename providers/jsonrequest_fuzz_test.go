package providers

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// answerShape holds the kinds of member the providers decode upstream answers into.
type answerShape struct {
	ID        int64             `json:"id"`
	Number    int               `json:"number"`
	Title     string            `json:"title"`
	Body      *string           `json:"body"`
	Score     float64           `json:"score"`
	Locked    bool              `json:"locked"`
	Milestone *int              `json:"milestone"`
	Labels    []answerLabel     `json:"labels"`
	Names     []string          `json:"names"`
	User      *answerLabel      `json:"user"`
	Created   time.Time         `json:"created_at"`
	Closed    *time.Time        `json:"closed_at"`
	Extra     map[string]any    `json:"extra"`
	Props     map[string]string `json:"props"`
	Raw       json.RawMessage   `json:"raw"`
	Any       any               `json:"any"`
	Text      string            `json:"text,omitempty"`
	Count     uint8             `json:"count,string"`
	answerEmbedded
}

type answerLabel struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

type answerEmbedded struct {
	Kind string `json:"kind"`
}

// FuzzAnswerDecode: decodeAnswer accepts exactly the answers encoding/json accepts,
// and decodes them to the same values.
func FuzzAnswerDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"number":1347,"title":"Found a bug","body":"I'm having a problem","score":1.5,"locked":false,"milestone":null,` +
			`"labels":[{"name":"bug","color":"f29513"}],"names":["a"],"user":{"name":"octocat"},"created_at":"2011-04-22T13:33:48Z",` +
			`"closed_at":null,"extra":{"a":[1,"x",null,true,{"b":2}]},"props":{"k":"v"},"raw":{"x":1},"any":12345678901234567890,"count":"7","kind":"issue"}`,
		`{"ID":2,"TITLE":"case","Kind":"x"}`,
		`{"title":"a","title":"b"}`,
		`{"title":"\u00e9\ud83d\ude00\\n"}`,
		`{"title":"` + "\xff" + `"}`,
		`{"number":1e3}`, `{"number":1.5}`, `{"number":99999999999999999999}`, `{"count":"300"}`, `{"count":7}`,
		`{"created_at":"not a time"}`, `{"labels":{}}`, `{"body":1}`,
		`{} x`, `[]`, `null`, `"s"`, ` {"id":1} `, `{`, ``, `{"a":}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got answerShape
		wantErr := json.Unmarshal(data, &want)
		gotErr := decodeAnswer(data, &got)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("decodeAnswer(%q) = %v; encoding/json says %v", data, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("decodeAnswer(%q) = %+v; encoding/json decodes %+v", data, got, want)
		}
	})
}
