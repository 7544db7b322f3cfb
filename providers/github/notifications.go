package github

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListNotifications lists the authenticated user's notifications.
// GitHub API docs: https://docs.github.com/rest/activity/notifications#list-notifications-for-the-authenticated-user
var ListNotifications = &providers.Operation[ListNotificationsInput, ListNotificationsOutput]{
	Name:  "list_notifications",
	Title: "List notifications",
	Description: "List the token user's GitHub notifications (review requests, mentions, assignments, CI results, new " +
		"issues in watched repositories), unread ones by default, most recently updated first. Each has a thread " +
		"id (for mark_notification_thread_read), the reason, the repository and the subject (title, type and API " +
		"URL of the issue, pull request, release, …). Needs a classic token with the notifications scope. Returns " +
		"a page of them.",
	DocsURL: "https://docs.github.com/rest/activity/notifications#list-notifications-for-the-authenticated-user",
	Scopes:  []string{"notifications"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listNotifications,
}

// MarkNotificationsRead marks all notifications read.
// GitHub API docs: https://docs.github.com/rest/activity/notifications#mark-notifications-as-read
var MarkNotificationsRead = &providers.Operation[MarkNotificationsReadInput, MarkNotificationsReadOutput]{
	Name:  "mark_notifications_read",
	Title: "Mark all notifications read",
	Description: "Mark every notification of the token user as read, or only those updated before last_read_at. To mark " +
		"one notification, use mark_notification_thread_read. GitHub may finish a large batch in the background. " +
		"Returns whether GitHub finished at once or is still marking.",
	DocsURL: "https://docs.github.com/rest/activity/notifications#mark-notifications-as-read",
	Scopes:  []string{"notifications"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     markNotificationsRead,
}

// MarkNotificationThreadRead marks one notification read.
// GitHub API docs: https://docs.github.com/rest/activity/notifications#mark-a-thread-as-read
var MarkNotificationThreadRead = &providers.Operation[ThreadInput, MarkThreadReadOutput]{
	Name:  "mark_notification_thread_read",
	Title: "Mark notification read",
	Description: "Mark one notification thread (the id from list_notifications) as read, once it has been dealt with. " +
		"Marking a read thread again changes nothing. Returns the thread id marked.",
	DocsURL: "https://docs.github.com/rest/activity/notifications#mark-a-thread-as-read",
	Scopes:  []string{"notifications"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     markNotificationThreadRead,
}

// ListNotificationsInput is the input of list_notifications.
type ListNotificationsInput struct {
	All           *bool   `json:"all,omitempty" jsonschema:"Include notifications already read" schema:"default=false"`
	Participating *bool   `json:"participating,omitempty" jsonschema:"Only notifications where the user participates or is mentioned" schema:"default=false"`
	Since         *string `json:"since,omitempty" jsonschema:"Only notifications updated at or after this time, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	Before        *string `json:"before,omitempty" jsonschema:"Only notifications updated before this time, e.g. 2024-06-01T00:00:00Z" schema:"format=date-time,example=2024-06-01T00:00:00Z"`
	providers.PageInput
}

// ListNotificationsOutput is one page of notifications.
type ListNotificationsOutput struct {
	Notifications []Notification `json:"notifications" jsonschema:"The notifications on this page"`
	NextCursor    string         `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Notification is one notification thread.
type Notification struct {
	ID          string `json:"id" jsonschema:"Thread ID, for mark_notification_thread_read"`
	Unread      bool   `json:"unread" jsonschema:"True while unread"`
	Reason      string `json:"reason" jsonschema:"Why the user got it, e.g. review_requested, mention, assign, subscribed, ci_activity"`
	Repository  string `json:"repository" jsonschema:"owner/name of the repository"`
	Title       string `json:"title" jsonschema:"Title of the subject (issue, pull request, release, …)"`
	SubjectType string `json:"subject_type" jsonschema:"Kind of subject, e.g. Issue, PullRequest, Release, CheckSuite"`
	SubjectURL  string `json:"subject_url,omitempty" jsonschema:"API URL of the subject; its last segment is the issue or pull request number"`
	UpdatedAt   string `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
}

// MarkNotificationsReadInput is the input of mark_notifications_read.
type MarkNotificationsReadInput struct {
	LastReadAt *string `json:"last_read_at,omitempty" jsonschema:"Mark only notifications updated before this time; omit for now, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
}

// MarkNotificationsReadOutput says how GitHub took the request.
type MarkNotificationsReadOutput struct {
	Done    bool   `json:"done" jsonschema:"True when every notification was marked at once; false when GitHub goes on in the background"`
	Message string `json:"message,omitempty" jsonschema:"GitHub's message, when it gave one"`
}

// ThreadInput names a notification thread.
type ThreadInput struct {
	ThreadID int64 `json:"thread_id" jsonschema:"Notification thread ID from list_notifications, e.g. 1" schema:"minimum=1,example=1"`
}

// MarkThreadReadOutput confirms a thread was marked read.
type MarkThreadReadOutput struct {
	ThreadID int64 `json:"thread_id" jsonschema:"The thread marked read"`
}

// ghNotification is the part of GitHub's thread object we read.
type ghNotification struct {
	ID         string `json:"id"`
	Unread     bool   `json:"unread"`
	Reason     string `json:"reason"`
	UpdatedAt  string `json:"updated_at"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Subject struct {
		Title string  `json:"title"`
		URL   *string `json:"url"`
		Type  string  `json:"type"`
	} `json:"subject"`
}

func listNotifications(ctx context.Context, c *providers.Call, in ListNotificationsInput) (ListNotificationsOutput, error) {
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListNotificationsOutput{}, err
	}
	if in.All != nil {
		q.Set("all", boolString(*in.All))
	}
	if in.Participating != nil {
		q.Set("participating", boolString(*in.Participating))
	}
	for field, v := range map[string]*string{"since": in.Since, "before": in.Before} {
		if v == nil {
			continue
		}
		if _, err := time.Parse(time.RFC3339, *v); err != nil {
			return ListNotificationsOutput{}, switchboard.Invalid(field, "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set(field, *v)
	}
	var res []ghNotification
	h, err := request{method: http.MethodGet, path: "/notifications", query: q}.do(ctx, c, &res)
	if err != nil {
		return ListNotificationsOutput{}, err
	}
	out := ListNotificationsOutput{Notifications: make([]Notification, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, n := range res {
		out.Notifications = append(out.Notifications, Notification{ID: n.ID, Unread: n.Unread, Reason: n.Reason, Repository: n.Repository.FullName,
			Title: n.Subject.Title, SubjectType: n.Subject.Type, SubjectURL: deref(n.Subject.URL), UpdatedAt: n.UpdatedAt})
	}
	return out, nil
}

func markNotificationsRead(ctx context.Context, c *providers.Call, in MarkNotificationsReadInput) (MarkNotificationsReadOutput, error) {
	body := map[string]any{"read": true}
	if in.LastReadAt != nil {
		if _, err := time.Parse(time.RFC3339, *in.LastReadAt); err != nil {
			return MarkNotificationsReadOutput{}, switchboard.Invalid("last_read_at", "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		body["last_read_at"] = *in.LastReadAt
	}
	var res struct {
		Message string `json:"message"`
	}
	st, err := request{method: http.MethodPut, path: "/notifications", body: body}.doStatus(ctx, c, &res)
	if err != nil {
		return MarkNotificationsReadOutput{}, err
	}
	// 205 Reset Content: all marked; 202 Accepted: GitHub goes on in the background.
	return MarkNotificationsReadOutput{Done: st != http.StatusAccepted, Message: res.Message}, nil
}

func markNotificationThreadRead(ctx context.Context, c *providers.Call, in ThreadInput) (MarkThreadReadOutput, error) {
	if in.ThreadID < 1 {
		return MarkThreadReadOutput{}, switchboard.Invalid("thread_id", "must be a positive thread ID from list_notifications")
	}
	p := "/notifications/threads/" + strconv.FormatInt(in.ThreadID, 10)
	if _, err := (request{method: http.MethodPatch, path: p}).do(ctx, c, nil); err != nil {
		return MarkThreadReadOutput{}, err
	}
	return MarkThreadReadOutput{ThreadID: in.ThreadID}, nil
}
