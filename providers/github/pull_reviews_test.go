package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/github"
)

// pullHead is the head SHA of the pull request in pull.json.
const pullHead = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func pullReviewCases() []opCase {
	statusFlow := func(status, checks string) []exchange {
		page := url.Values{"per_page": {"100"}}
		return []exchange{
			{method: http.MethodGet, path: "/repos/octocat/Hello-World/pulls/1347", opID: "pulls/get", fixture: "pull.json"},
			{method: http.MethodGet, path: "/repos/octocat/Hello-World/commits/" + pullHead + "/status", query: page, opID: "repos/get-combined-status-for-ref", fixture: status},
			{method: http.MethodGet, path: "/repos/octocat/Hello-World/commits/" + pullHead + "/check-runs", query: page, opID: "checks/list-for-ref", fixture: checks},
		}
	}
	jenkins := github.Status{Context: "continuous-integration/jenkins", State: "success", Description: "Build has completed successfully", TargetURL: "https://ci.example.com/1000/output"}
	brakeman := github.Status{Context: "security/brakeman", State: "success", Description: "Testing has completed successfully", TargetURL: "https://ci.example.com/2000/output"}
	brakemanRunning := brakeman
	brakemanRunning.State, brakemanRunning.Description = "pending", "Testing is running"
	readme := github.CheckRun{Name: "mighty_readme", Status: "completed", Conclusion: "neutral", HTMLURL: "https://github.com/github/hello-world/runs/4"}
	build := github.CheckRun{Name: "build", Status: "completed", Conclusion: "failure", HTMLURL: "https://github.com/github/hello-world/runs/4"}
	prArgs := `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1347}`
	return []opCase{
		{
			name: "pull request files", tool: "github_get_pull_request_files", fixture: "pull_files.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1347, "limit": 100}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls/1347/files", wantOpID: "pulls/list-files",
			wantQuery: url.Values{"per_page": {"100"}},
			want: github.PullFilesOutput{Files: []github.FileChange{{Filename: "file1.txt", Status: "added", Additions: 103, Deletions: 21, Changes: 124,
				Patch: "@@ -132,7 +132,7 @@ module Test @@ -1000,7 +1000,7 @@ module Test"}}},
		},
		{
			name: "status: statuses and checks pass", tool: "github_get_pull_request_status", args: prArgs,
			flow: statusFlow("combined_status.json", "check_runs.json"),
			want: github.PullStatus{State: "success", HeadSHA: pullHead, Statuses: []github.Status{jenkins, brakeman}, CheckRuns: []github.CheckRun{readme}},
		},
		{
			name: "status: a failed check run fails the whole", tool: "github_get_pull_request_status", args: prArgs,
			flow: statusFlow("combined_status_pending.json", "check_runs_failed.json"),
			want: github.PullStatus{State: "failure", HeadSHA: pullHead, Statuses: []github.Status{jenkins, brakemanRunning}, CheckRuns: []github.CheckRun{build}},
		},
		{
			name: "status: a pending status keeps it pending", tool: "github_get_pull_request_status", args: prArgs,
			flow: statusFlow("combined_status_pending.json", "check_runs.json"),
			want: github.PullStatus{State: "pending", HeadSHA: pullHead, Statuses: []github.Status{jenkins, brakemanRunning}, CheckRuns: []github.CheckRun{readme}},
		},
		{
			name: "status: no checks at all", tool: "github_get_pull_request_status", args: prArgs,
			flow: statusFlow("combined_status_none.json", "check_runs_none.json"),
			want: github.PullStatus{State: "none", HeadSHA: pullHead, Statuses: []github.Status{}, CheckRuns: []github.CheckRun{}},
		},
		{
			name: "review comments since", tool: "github_get_pull_request_comments", fixture: "review_comments.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1, "since": "2011-04-01T00:00:00Z"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls/1/comments", wantOpID: "pulls/list-review-comments",
			wantQuery: url.Values{"since": {"2011-04-01T00:00:00Z"}, "per_page": {"30"}},
			want: github.PullCommentsOutput{Comments: []github.ReviewComment{{ID: 10, Path: "file1.txt", Line: ptr(2), Body: "Great stuff!", User: "octocat",
				InReplyToID: ptr(int64(8)), HTMLURL: "https://github.com/octocat/Hello-World/pull/1#discussion-diff-1",
				CreatedAt: "2011-04-14T16:00:49Z", UpdatedAt: "2011-04-14T16:00:49Z"}}},
		},
		{
			name: "reviews", tool: "github_get_pull_request_reviews", fixture: "reviews.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 12}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls/12/reviews", wantOpID: "pulls/list-reviews",
			wantQuery: url.Values{"per_page": {"30"}},
			want: github.PullReviewsOutput{Reviews: []github.Review{{ID: 80, User: "octocat", State: "APPROVED", Body: "Here is the body for the review.",
				CommitID: "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091", HTMLURL: "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80",
				SubmittedAt: "2019-11-17T17:43:43Z"}}},
		},
		{
			name: "request changes with a line comment", tool: "github_create_pull_request_review", fixture: "review.json",
			args: `{"owner": "octocat", "repo": "Hello-World", "pull_number": 12, "event": "REQUEST_CHANGES",
				"body": "This is close to perfect! Please address the suggested inline change.", "commit_id": "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091",
				"comments": [{"path": "file.md", "line": 6, "side": "RIGHT", "body": "Please add more information here."}]}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/pulls/12/reviews", wantOpID: "pulls/create-review",
			wantBody: map[string]any{"event": "REQUEST_CHANGES", "body": "This is close to perfect! Please address the suggested inline change.",
				"commit_id": "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091",
				"comments":  []any{map[string]any{"path": "file.md", "line": float64(6), "side": "RIGHT", "body": "Please add more information here."}}},
			want: github.Review{ID: 80, User: "octocat", State: "CHANGES_REQUESTED", Body: "This is close to perfect! Please address the suggested inline change.",
				CommitID: "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091", HTMLURL: "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80",
				SubmittedAt: "2019-11-17T17:43:43Z"},
		},
		{
			name: "approve without a body", tool: "github_create_pull_request_review", fixture: "review.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 12, "event": "APPROVE"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/pulls/12/reviews", wantOpID: "pulls/create-review",
			wantBody: map[string]any{"event": "APPROVE"},
			want: github.Review{ID: 80, User: "octocat", State: "CHANGES_REQUESTED", Body: "This is close to perfect! Please address the suggested inline change.",
				CommitID: "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091", HTMLURL: "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80",
				SubmittedAt: "2019-11-17T17:43:43Z"},
		},
		{
			name: "squash merge at a reviewed head", tool: "github_merge_pull_request", fixture: "merge.json",
			args: `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1347, "merge_method": "squash", "commit_title": "Amazing new feature (#1347)",
				"commit_message": "Reviewed", "sha": "` + pullHead + `"}`,
			wantMethod: http.MethodPut, wantPath: "/repos/octocat/Hello-World/pulls/1347/merge", wantOpID: "pulls/merge",
			wantBody: map[string]any{"merge_method": "squash", "commit_title": "Amazing new feature (#1347)", "commit_message": "Reviewed", "sha": pullHead},
			want:     github.MergeResult{Merged: true, SHA: pullHead, Message: "Pull Request successfully merged"},
		},
		{
			name: "update branch", tool: "github_update_pull_request_branch", fixture: "update_branch.json", status: http.StatusAccepted,
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 53, "expected_head_sha": "` + pullHead + `"}`,
			wantMethod: http.MethodPut, wantPath: "/repos/octocat/Hello-World/pulls/53/update-branch", wantOpID: "pulls/update-branch",
			wantBody: map[string]any{"expected_head_sha": pullHead},
			want:     github.UpdatePullBranchOutput{Message: "Updating pull request branch."},
		},
	}
}

func TestPullRequestReviews(t *testing.T) {
	t.Parallel()
	for _, tc := range pullReviewCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
