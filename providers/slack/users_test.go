package slack

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

const (
	userJane = `{"id":"U012AB3CDE","team_id":"T012AB3C4D","name":"jane.doe","deleted":false,"color":"9f69e7","real_name":"Jane Doe",
		"tz":"America/Los_Angeles","tz_label":"Pacific Daylight Time","tz_offset":-25200,
		"profile":{"avatar_hash":"ge3b51ca72de","status_text":"Print is dead","status_emoji":":books:","real_name":"Jane Doe",
		 "display_name":"jane","real_name_normalized":"Jane Doe","display_name_normalized":"jane","email":"jane@acme.example",
		 "image_24":"https://avatars.slack-edge.com/2024-01-01/jane_24.jpg","title":"Staff Engineer","phone":"","skype":"",
		 "fields":{},"team":"T012AB3C4D"},
		"is_admin":true,"is_owner":false,"is_primary_owner":false,"is_restricted":false,"is_ultra_restricted":false,
		"is_bot":false,"is_app_user":false,"updated":1712000000,"has_2fa":true}`
	userBot = `{"id":"U0456EFGH","team_id":"T012AB3C4D","name":"switchboard","deleted":false,"color":"e7392d","real_name":"Switchboard",
		"tz":"America/Los_Angeles","tz_label":"Pacific Daylight Time","tz_offset":-25200,
		"profile":{"avatar_hash":"g8a63f4f5d3c","status_text":"","status_emoji":"","real_name":"Switchboard","display_name":"",
		 "real_name_normalized":"Switchboard","display_name_normalized":"","title":"","phone":"","skype":"","fields":null,
		 "bot_id":"B0789IJKLM","always_active":true,"team":"T012AB3C4D"},
		"is_admin":false,"is_owner":false,"is_primary_owner":false,"is_restricted":false,"is_ultra_restricted":false,
		"is_bot":true,"is_app_user":false,"updated":1712000100}`
	usersListOK = `{"ok":true,"members":[` + userJane + `,` + userBot + `],"cache_ts":1712345678,
		"response_metadata":{"next_cursor":"dXNlcjpVMEc5V0ZYTlo="}}`
	usersInfoOK = `{"ok":true,"user":` + userJane + `}`
)

var (
	wantJane = User{ID: "U012AB3CDE", Name: "jane.doe", RealName: "Jane Doe", DisplayName: "jane", Email: "jane@acme.example",
		Title: "Staff Engineer", TZ: "America/Los_Angeles", IsAdmin: true}
	wantBot = User{ID: "U0456EFGH", Name: "switchboard", RealName: "Switchboard", TZ: "America/Los_Angeles", IsBot: true}
)

func TestGetUsers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      string
		wantQuery map[string]string
	}{
		{name: "first page", args: `{}`, wantQuery: map[string]string{"limit": "30"}},
		{name: "next page", args: `{"limit":2,"cursor":"` + providers.EncodeCursor("dXNlcjpVMEc5V0ZYTlo=") + `"}`,
			wantQuery: map[string]string{"limit": "2", "cursor": "dXNlcjpVMEc5V0ZYTlo="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: usersListOK})
			got, err := invoke(t, f.call, "slack_get_users", tt.args)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			want := GetUsersOutput{Users: []User{wantJane, wantBot}, NextCursor: providers.EncodeCursor("dXNlcjpVMEc5V0ZYTlo=")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			wantRequest{method: http.MethodGet, path: "/users.list", query: tt.wantQuery}.check(t, f.up.Last(t))
			if diff := cmp.Diff([]string{"users_list"}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			providertest.SlackDescription(t).CheckResponse(t, "users_list", http.StatusOK, []byte(usersListOK))
			checkOutput(t, tool(t, "slack_get_users"), got)
		})
	}
}

func TestGetUsersEmptyPage(t *testing.T) {
	t.Parallel()
	// Slack's description says members has at least one item, but a workspace's last
	// page can be empty; the output still holds an empty list, not null.
	f := newFake(t, answer{body: `{"ok":true,"members":[],"cache_ts":1712345678,"response_metadata":{"next_cursor":""}}`})
	got, err := invoke(t, f.call, "slack_get_users", `{}`)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if diff := cmp.Diff(GetUsersOutput{Users: []User{}}, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	checkOutput(t, tool(t, "slack_get_users"), got)
	f.checkRequests(t)
}

func TestGetUserProfile(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer{body: usersInfoOK})
	got, err := invoke(t, f.call, "slack_get_user_profile", `{"user":"U012AB3CDE"}`)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if diff := cmp.Diff(wantJane, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	wantRequest{method: http.MethodGet, path: "/users.info", query: map[string]string{"user": "U012AB3CDE"}}.check(t, f.up.Last(t))
	if diff := cmp.Diff([]string{"users_info"}, f.checkRequests(t)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	providertest.SlackDescription(t).CheckResponse(t, "users_info", http.StatusOK, []byte(usersInfoOK))
	checkOutput(t, tool(t, "slack_get_user_profile"), got)
}
