package conformancefixture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// taskOp is a fixture tool of the tasks extension's scenarios (SEP-2663): an op that
// says how it runs as a task.
type taskOp struct {
	op
	task providers.TaskSupport
	// asksFirst: the tool asks its client before it continues as a task.
	asksFirst bool
}

func (o taskOp) Info() providers.Info {
	info := o.op.Info()
	info.Task, info.AsksBeforeTask = o.task, o.asksFirst
	return info
}

// taskOperations are the tools the tasks scenarios call: greet never runs as a task,
// slow_compute, protocol_error_job, confirm_delete and multi_input run as one where the
// client takes tasks, failing_job and test_tool_with_task only as one (the latter asks
// the user's name before its task).
func taskOperations() []providers.Op {
	return []providers.Op{
		taskOp{op{name: "greet", description: "Greets the name at once (never a task).",
			input: stringArg("name", "Who to greet"), run: greet}, providers.TaskForbidden, false},
		taskOp{op{name: "slow_compute", description: "Answers after the given number of seconds, unless cancelled first.",
			input: `{"type":"object","properties":{"seconds":{"type":"number","description":"How long to compute"},"label":{"type":"string","description":"A label echoed in the answer"}}}`,
			run:   slowCompute}, providers.TaskPreferred, false},
		taskOp{op{name: "failing_job", description: "Fails after a second, as a tool result marked isError (only as a task).",
			run: failingJob}, providers.TaskRequired, false},
		taskOp{op{name: "protocol_error_job", description: "Fails with an internal error, not a tool result.",
			run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
				return nil, switchboard.Internal(errors.New("protocol_error_job fails on purpose"))
			}}, providers.TaskPreferred, false},
		taskOp{op{name: "confirm_delete", description: "Asks the user to confirm deleting the file, then answers what was decided.",
			input: stringArg("filename", "The file to delete"), run: confirmDelete}, providers.TaskPreferred, false},
		taskOp{op{name: "multi_input", description: "Asks the user two questions at once, then answers both answers.",
			run: multiInput}, providers.TaskPreferred, false},
		taskOp{op{name: "test_tool_with_task", description: "Asks the user's name, then greets it as a task (only as a task).",
			run: greetAsked}, providers.TaskRequired, true},
	}
}

func greet(_ context.Context, args map[string]any) (*providers.ContentResult, error) {
	name, _ := args["name"].(string)
	return result(text("Hello, " + name + "!")), nil
}

func slowCompute(ctx context.Context, args map[string]any) (*providers.ContentResult, error) {
	seconds, _ := args["seconds"].(float64)
	label, _ := args["label"].(string)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(seconds * float64(time.Second))):
		return result(text(fmt.Sprintf("Computed %q in %v s", label, seconds))), nil
	}
}

func failingJob(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Second):
		return &providers.ContentResult{IsError: true, Content: []json.RawMessage{text("failing_job failed, as it always does")}}, nil
	}
}

// answer is the client's answer to an elicitation.
type answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// askForm asks the user one form.
func askForm(ctx context.Context, message string, properties map[string]any) (answer, error) {
	var a answer
	err := ask(ctx, "elicitation/create", map[string]any{"mode": "form", "message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": properties}}, &a)
	return a, err
}

func confirmDelete(ctx context.Context, args map[string]any) (*providers.ContentResult, error) {
	filename, _ := args["filename"].(string)
	a, err := askForm(ctx, "Delete "+filename+"?", map[string]any{"confirm": map[string]any{"type": "boolean", "description": "Delete the file"}})
	if err != nil {
		return nil, err
	}
	if a.Action == "accept" && a.Content["confirm"] == true {
		return result(text("Deleted " + filename)), nil
	}
	return result(text("Kept " + filename + " (" + a.Action + ")")), nil
}

func multiInput(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	questions := []string{"What is your name?", "Do you confirm?"}
	answers := make([]string, len(questions))
	errs := make([]error, len(questions))
	var wg sync.WaitGroup
	for i, q := range questions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := askForm(ctx, q, map[string]any{"name": str("Your name"), "confirm": map[string]any{"type": "boolean"}})
			answers[i], errs[i] = fmt.Sprintf("%s %v", a.Action, a.Content), err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return result(text("Answers: " + strings.Join(answers, "; "))), nil
}

func greetAsked(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askForm(ctx, "What is your name?", map[string]any{"name": str("Your name")})
	if err != nil {
		return nil, err
	}
	providers.ContinueAsTask(ctx)
	name, _ := a.Content["name"].(string)
	return result(text("Hello, " + name + "!")), nil
}
