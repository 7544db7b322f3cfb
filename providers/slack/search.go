package slack

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// SearchMessages searches the workspace's messages. Slack allows search.messages only
// with a user token (xoxp-); a bot token answers not_allowed_token_type, which
// classify turns into an error telling the person to connect with a user token.
// Slack API docs: https://api.slack.com/methods/search.messages
var SearchMessages = &providers.Operation[SearchMessagesInput, SearchMessagesOutput]{
	Name:  "search_messages",
	Title: "Search messages",
	Description: "Search the Slack workspace's messages the way the Slack search box does, across every channel the " +
		"connected person can see. Needs a Slack connection with a user token (xoxp-…, scope search:read): bot tokens " +
		"(xoxb-…) cannot search, and the call then fails telling to connect Slack with a user token. query takes " +
		"Slack's search modifiers: in:#channel, from:@handle, has:link, before:2024-05-01, after:, during:, \"exact " +
		"phrase\". To read a known channel's recent messages use get_channel_history instead. Returns the matching " +
		"messages (channel, ts, author, text, permalink) and the total number of matches. Pages: pass next_cursor " +
		"back as cursor.",
	DocsURL: "https://api.slack.com/methods/search.messages",
	Scopes:  []string{"search:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchMessages,
}

// SearchMessagesInput is the input of search_messages.
type SearchMessagesInput struct {
	Query   string  `json:"query" jsonschema:"What to search for, with Slack's modifiers if needed, e.g. deploy failed in:#ops after:2024-05-01" schema:"minLength=1,maxLength=1000,example=deploy failed in:#ops"`
	Sort    *string `json:"sort,omitempty" jsonschema:"Order of the matches: score (relevance) or timestamp (date)" schema:"enum=score|timestamp,default=score"`
	SortDir *string `json:"sort_dir,omitempty" jsonschema:"Direction of the order: desc (best or newest first) or asc" schema:"enum=desc|asc,default=desc"`
	providers.PageInput
}

// SearchMessagesOutput is a page of search matches.
type SearchMessagesOutput struct {
	Matches    []SearchMatch `json:"matches" jsonschema:"The matching messages in this page"`
	Total      int           `json:"total" jsonschema:"How many messages match in all, over every page"`
	NextCursor string        `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// SearchMatch is one message found by search.
type SearchMatch struct {
	Channel     string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD"`
	ChannelName string `json:"channel_name,omitempty" jsonschema:"The channel's name without #, when it has one"`
	TS          string `json:"ts" jsonschema:"The message's ts, e.g. 1712345678.123456; with channel it names the message for other Slack tools"`
	User        string `json:"user,omitempty" jsonschema:"Author's user ID (U…)"`
	Username    string `json:"username,omitempty" jsonschema:"Author's handle"`
	Text        string `json:"text" jsonschema:"Message text in Slack mrkdwn"`
	Permalink   string `json:"permalink,omitempty" jsonschema:"Link to the message in Slack"`
}

type searchMessagesResponse struct {
	envelope
	Messages struct {
		Total   int `json:"total"`
		Matches []struct {
			Channel struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"channel"`
			TS        string `json:"ts"`
			User      string `json:"user"`
			Username  string `json:"username"`
			Text      string `json:"text"`
			Permalink string `json:"permalink"`
		} `json:"matches"`
		Paging struct {
			Page  int `json:"page"`
			Pages int `json:"pages"`
		} `json:"paging"`
	} `json:"messages"`
}

// Slack's search pages are numbered from 1, in units of count; it serves at most 100
// pages and at most 100 matches a page.
const maxSearchPage = 100

func searchMessages(ctx context.Context, c *providers.Call, in SearchMessagesInput) (SearchMessagesOutput, error) {
	page, count, err := searchPage(in.PageInput)
	if err != nil {
		return SearchMessagesOutput{}, err
	}
	q := url.Values{"query": {in.Query}, "count": {strconv.Itoa(count)}, "page": {strconv.Itoa(page)}}
	setOpt(q, "sort", in.Sort)
	setOpt(q, "sort_dir", in.SortDir)
	var r searchMessagesResponse
	if _, err := send(ctx, c, http.MethodGet, "search.messages", q, &r); err != nil {
		return SearchMessagesOutput{}, err
	}
	out := SearchMessagesOutput{Matches: make([]SearchMatch, 0, len(r.Messages.Matches)), Total: r.Messages.Total}
	for _, m := range r.Messages.Matches {
		out.Matches = append(out.Matches, SearchMatch{
			Channel: m.Channel.ID, ChannelName: m.Channel.Name, TS: m.TS, User: m.User, Username: m.Username,
			Text: m.Text, Permalink: m.Permalink,
		})
	}
	if p := r.Messages.Paging; p.Page < p.Pages && p.Page < maxSearchPage {
		out.NextCursor = providers.EncodeCursor(url.Values{"page": {strconv.Itoa(p.Page + 1)}, "count": {strconv.Itoa(count)}}.Encode())
	}
	return out, nil
}

// searchPage returns the page and count to ask for: from the limit on the first page;
// on later pages both from the cursor, whatever the limit says, because Slack numbers
// pages in units of count and another size would skip or repeat matches.
func searchPage(p providers.PageInput) (page, count int, err error) {
	pos, err := p.DecodedCursor()
	if err != nil {
		return 0, 0, err
	}
	if pos == "" {
		return 1, p.LimitOr(30), nil
	}
	v, perr := url.ParseQuery(pos)
	page, pageErr := strconv.Atoi(v.Get("page"))
	count, countErr := strconv.Atoi(v.Get("count"))
	if perr != nil || pageErr != nil || countErr != nil || page < 2 || page > maxSearchPage || count < 1 || count > 100 {
		return 0, 0, switchboard.Invalid("cursor", "is not a cursor search_messages returned; pass next_cursor from the previous page, or omit it")
	}
	return page, count, nil
}
