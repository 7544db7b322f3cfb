package workflows

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
)

// The webhook providers a trigger may name.
const (
	HookGitHub = "github"
	HookSlack  = "slack"
)

// slackSkew is how far a Slack request's timestamp may be from now: older ones are
// refused as replays (Slack's own advice is five minutes).
const slackSkew = 5 * time.Minute

// webhookSecret is one row of workflow_webhook_secrets.
type webhookSecret struct {
	TenantID     switchboard.TenantID `gorm:"size:40;not null"`
	WorkflowID   string               `gorm:"primaryKey;size:40"`
	Provider     string               `gorm:"primaryKey;size:32"`
	SecretSealed []byte               `gorm:"not null"`
	KeyID        string               `gorm:"size:128;not null"`
	UpdatedBy    string               `gorm:"size:64;not null"`
	UpdatedAt    time.Time            `gorm:"not null"`
}

func (webhookSecret) TableName() string { return "workflow_webhook_secrets" }

func secretAAD(tenant switchboard.TenantID, workflowID, provider string) []byte {
	return []byte("switchboard/workflow-webhook-secret/v1\x00" + string(tenant) + "\x00" + workflowID + "\x00" + provider)
}

// setSecret stores a workflow's webhook signing secret, sealed.
func (s *Store) setSecret(ctx context.Context, w *Workflow, provider, secret, by string) error {
	sealed, keyID, err := s.kr.Seal(ctx, []byte(secret), secretAAD(w.TenantID, w.ID, provider))
	if err != nil {
		return switchboard.Internal(fmt.Errorf("seal the webhook secret of workflow %s: %w", w.Name, err))
	}
	row := webhookSecret{TenantID: w.TenantID, WorkflowID: w.ID, Provider: provider, SecretSealed: sealed, KeyID: keyID, UpdatedBy: by, UpdatedAt: s.now()}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "workflow_id"}, {Name: "provider"}},
		DoUpdates: clause.AssignmentColumns([]string{"secret_sealed", "key_id", "updated_by", "updated_at"}),
	}).Create(&row).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("store the webhook secret of workflow %s: %w", w.Name, err))
	}
	return nil
}

// secret opens a workflow's webhook signing secret ("" when none is set).
func (s *Store) secret(ctx context.Context, w *Workflow, provider string) ([]byte, error) {
	var row webhookSecret
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND workflow_id = ? AND provider = ?", w.TenantID, w.ID, provider).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("read the webhook secret of workflow %s: %w", w.Name, err))
	}
	out, err := s.kr.Open(ctx, row.KeyID, row.SecretSealed, secretAAD(w.TenantID, w.ID, provider))
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("open the webhook secret of workflow %s: %w", w.Name, err))
	}
	return out, nil
}

// SetWebhookSecret stores the signing secret of one of the workflow's webhook
// triggers: only the person who saved the workflow may, not an admin for them nor an
// agent's key. The workflow must have that trigger.
func (s *Service) SetWebhookSecret(ctx context.Context, p switchboard.Principal, name, provider, secret string) error {
	if p.Kind != switchboard.PrincipalUser {
		return switchboard.AgentForbidden("set a workflow's webhook secret")
	}
	w, err := s.Store.Get(ctx, p.TenantID, name)
	if err != nil {
		return err
	}
	// A delivery runs the workflow as the person who saved it, with the sender's
	// parameters: whoever holds the secret acts as that person. So only they set it; an
	// admin who wants the trigger saves the workflow again (it then runs as the admin).
	if w.CreatedBy != p.ID() {
		return switchboard.Errorf(switchboard.CodeForbidden, "workflow %s runs as the person who saved it, so only they may set its webhook secret; save it yourself to take it over", name)
	}
	if _, ok := webhookTrigger(w, provider); !ok {
		return switchboard.Invalid("provider", fmt.Sprintf("workflow %s has no %s trigger", name, provider))
	}
	if len(secret) < 16 || len(secret) > 256 {
		return switchboard.Invalid("secret", "must be 16 to 256 characters")
	}
	return s.Store.setSecret(ctx, &w, provider, secret, p.ID())
}

// webhookTrigger finds the workflow's trigger of that provider.
func webhookTrigger(w Workflow, provider string) (*WebhookTrigger, bool) {
	def, err := Parse([]byte(w.Definition))
	if err != nil {
		return nil, false
	}
	for _, tr := range def.Triggers {
		switch {
		case provider == HookGitHub && tr.GitHub != nil:
			return tr.GitHub, true
		case provider == HookSlack && tr.Slack != nil:
			return tr.Slack, true
		}
	}
	return nil, false
}

// HookAnswer is what a webhook request is answered: a status and, for Slack's URL
// verification, the body.
type HookAnswer struct {
	Status int
	Body   any
}

// Webhook handles a provider's delivery to one of the tenant's workflows: the
// signature is checked in constant time against the trigger's secret, a delivery seen
// before (for GitHub: a body seen before, whatever its delivery id; see replayKey), or
// a Slack request older than five minutes, is refused as a replay, Slack's
// URL verification is answered, and an event the trigger takes starts a run with the
// event as its parameters, as the person who saved the workflow. Every refusal is the
// same 404 or 401, so a caller without the secret learns nothing. The body is read
// (read) only once the workflow, its trigger and its secret are found and the request
// carries a signature of the provider's shape: an unsigned request, or one to a URL
// that takes none, is refused for the price of its headers.
func (s *Service) Webhook(ctx context.Context, tenant switchboard.TenantID, name, provider string, h http.Header, read func() ([]byte, error), now time.Time) (HookAnswer, error) {
	w, err := s.Store.Get(ctx, tenant, name)
	if err != nil {
		return HookAnswer{}, switchboard.NotFound("webhook")
	}
	trig, ok := webhookTrigger(w, provider)
	if !ok {
		return HookAnswer{}, switchboard.NotFound("webhook")
	}
	secret, err := s.Store.secret(ctx, &w, provider)
	if err != nil {
		return HookAnswer{}, err
	}
	if len(secret) == 0 {
		return HookAnswer{}, switchboard.NotFound("webhook")
	}
	unsigned := &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the request's signature does not match"}
	if !signedShape(provider, h) {
		return HookAnswer{}, unsigned
	}
	body, err := read()
	if err != nil {
		return HookAnswer{}, err
	}
	var event, delivery string
	var params json.RawMessage
	switch provider {
	case HookGitHub:
		if !validSignature(secret, body, strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")) {
			return HookAnswer{}, unsigned
		}
		event, delivery = h.Get("X-GitHub-Event"), h.Get("X-GitHub-Delivery")
		if event == "ping" {
			return HookAnswer{Status: http.StatusOK, Body: map[string]any{"ok": true}}, nil
		}
		params = body
	case HookSlack:
		ts := h.Get("X-Slack-Request-Timestamp")
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || !validSignature(secret, []byte("v0:"+ts+":"+string(body)), strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0=")) {
			return HookAnswer{}, unsigned
		}
		if at := time.Unix(sec, 0); now.Sub(at) > slackSkew || at.Sub(now) > slackSkew {
			return HookAnswer{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the request's timestamp is more than five minutes off: refused as a replay"}
		}
		var cb struct {
			Type      string          `json:"type"`
			Challenge string          `json:"challenge"`
			EventID   string          `json:"event_id"`
			Event     json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(body, &cb); err != nil {
			return HookAnswer{}, switchboard.Invalid("body", "is not a Slack Events API request")
		}
		if cb.Type == "url_verification" {
			return HookAnswer{Status: http.StatusOK, Body: map[string]string{"challenge": cb.Challenge}}, nil
		}
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(cb.Event, &ev)
		event, delivery, params = ev.Type, cb.EventID, cb.Event
	default:
		return HookAnswer{}, switchboard.NotFound("webhook")
	}
	if delivery == "" {
		return HookAnswer{}, switchboard.Invalid("delivery", "the request names no delivery (X-GitHub-Delivery, or Slack's event_id)")
	}
	if len(trig.Events) > 0 && !slices.Contains(trig.Events, event) {
		return HookAnswer{Status: http.StatusOK, Body: map[string]any{"ok": true, "ignored": event}}, nil
	}
	fresh, err := s.Store.claim(ctx, &w, clipKey(provider+":"+replayKey(provider, delivery, body)), time.Unix(0, 0))
	if err != nil {
		return HookAnswer{}, err
	}
	if !fresh {
		return HookAnswer{}, &switchboard.Error{Code: switchboard.CodeConflict, Message: "this delivery was received before: refused as a replay"}
	}
	if len(params) == 0 || params[0] != '{' {
		params = json.RawMessage(`{}`)
	}
	if err := s.StartAs(ctx, w, params); err != nil {
		return HookAnswer{}, err
	}
	return HookAnswer{Status: http.StatusAccepted, Body: map[string]any{"ok": true}}, nil
}

// signedShape reports whether h carries the provider's signature headers, well
// formed: what a delivery must have before its body is worth reading.
func signedShape(provider string, h http.Header) bool {
	hexMAC := func(v, prefix string) bool {
		mac, ok := strings.CutPrefix(v, prefix)
		b, err := hex.DecodeString(mac)
		return ok && err == nil && len(b) == sha256.Size
	}
	switch provider {
	case HookGitHub:
		return hexMAC(h.Get("X-Hub-Signature-256"), "sha256=")
	case HookSlack:
		_, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
		return err == nil && hexMAC(h.Get("X-Slack-Signature"), "v0=")
	}
	return false
}

// replayKey is what a delivery is known by, once, to refuse its replays: for Slack its
// event_id, which the signature covers (and the signed timestamp bounds replays to five
// minutes besides); for GitHub the SHA-256 of the body. GitHub signs only the body, not
// X-GitHub-Delivery, so a captured delivery sent again under a new delivery id would
// pass as new if the id were the key. Keying on the body keeps GitHub's redeliveries
// right: a redelivery resends the same body, so it is refused when the original was
// received (it ran already) and runs when the original never arrived. GitHub's event
// bodies carry their objects' ids and times, so two bodies alike are one event.
func replayKey(provider, delivery string, body []byte) string {
	if provider != HookGitHub {
		return delivery
	}
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validSignature compares an HMAC-SHA-256 given in hex with the body's, in constant
// time.
func validSignature(secret, signed []byte, given string) bool {
	got, err := hex.DecodeString(given)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(signed)
	return hmac.Equal(mac.Sum(nil), got)
}

func clipKey(k string) string {
	if len(k) > 80 {
		return k[:80]
	}
	return k
}
