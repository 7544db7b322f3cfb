// Package fleet is what the nodes of a fleet say about themselves: each running
// `switchboard serve` keeps a row in nodes with a fingerprint of its non-secret
// settings (its OAuth apps' client IDs, its keyring's key IDs, its public URL, …) and a
// heartbeat, so that a node can tell when it runs with other settings than its live
// peers: the mistake of a rolling deploy that reaches one node only.
//
// Start from [Membership] (this node's row and heartbeat, from [Options]), [Settings]
// and their [Fingerprint], and [Difference] (what differs from a live peer).
package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Settings are a node's non-secret settings by name: never a secret, nor anything from
// which one could be guessed.
type Settings map[string]string

// Fingerprint is the SHA-256 of the settings in a canonical form.
func Fingerprint(s Settings) string {
	b, _ := json.Marshal(s) // a map of strings always encodes, with its keys sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// row is a row of nodes.
type row struct {
	ID          string    `gorm:"primaryKey;size:64"`
	Fingerprint string    `gorm:"size:64;not null"`
	Settings    string    `gorm:"type:text;not null"`
	Version     string    `gorm:"size:100;not null"`
	StartedAt   time.Time `gorm:"not null"`
	HeartbeatAt time.Time `gorm:"not null;index"`
}

func (row) TableName() string { return "nodes" }

// Options configure a Membership.
type Options struct {
	DB *gorm.DB
	// Node is this node's id (the change feed's).
	Node string
	// Version is the build's version, shown beside the settings.
	Version string
	// Settings returns this node's settings; it is asked at every heartbeat, since some
	// change while the node runs (the keyring's key IDs after a rotation).
	Settings func(ctx context.Context) (Settings, error)
	// Interval is the heartbeat's period (default 10 s); a peer silent for three
	// intervals is no longer live.
	Interval time.Duration
	Logger   *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Membership keeps this node's row and compares it with its peers'. Safe for
// concurrent use.
type Membership struct {
	o       Options
	started time.Time

	mu   sync.Mutex
	last Settings
	live []string // the live nodes' ids, as of the last beat
	// beat is when the last beat read them.
	beat time.Time
}

// New returns a Membership; call Beat (or Run) to publish this node's settings.
func New(o Options) *Membership {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Membership{o: o, started: o.Now().UTC().Truncate(time.Microsecond)}
}

// deadAfter is how many heartbeat intervals a peer may stay silent before a beat of
// another node removes its row: twice the three after which it no longer counts as
// live, so a node that was only slow for a while is not taken for dead.
const deadAfter = 6

// Beat writes this node's row with its current settings and a new heartbeat, and
// removes the rows of peers silent for deadAfter intervals (killed, or cut off): the
// node whose delete removed a row logs that peer's departure, so it is logged once
// across the fleet.
func (m *Membership) Beat(ctx context.Context) error {
	s, err := m.o.Settings(ctx)
	if err != nil {
		return fmt.Errorf("read this node's settings: %w", err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode this node's settings: %w", err)
	}
	now := m.o.Now().UTC().Truncate(time.Microsecond)
	r := row{ID: m.o.Node, Fingerprint: Fingerprint(s), Settings: string(b), Version: m.o.Version, StartedAt: m.started, HeartbeatAt: now}
	err = m.o.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "settings", "version", "heartbeat_at"}),
	}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("write this node's heartbeat: %w", err)
	}
	m.mu.Lock()
	m.last = maps.Clone(s)
	m.mu.Unlock()
	if err := m.pruneDead(ctx, now); err != nil {
		return err
	}
	var live []string
	if err := m.o.DB.WithContext(ctx).Model(&row{}).Where("heartbeat_at >= ?", now.Add(-3*m.o.Interval)).Order("id").Pluck("id", &live).Error; err != nil {
		return fmt.Errorf("list live nodes: %w", err)
	}
	m.mu.Lock()
	m.live, m.beat = live, now
	m.mu.Unlock()
	return nil
}

// pruneDead removes the rows of peers silent for deadAfter intervals. Each is deleted
// on its own, still silent: of the nodes pruning at once only one deletes it (and logs
// its departure), and a peer that beat again meanwhile keeps its row.
func (m *Membership) pruneDead(ctx context.Context, now time.Time) error {
	cutoff := now.Add(-deadAfter * m.o.Interval)
	var dead []row
	if err := m.o.DB.WithContext(ctx).Where("id <> ? AND heartbeat_at < ?", m.o.Node, cutoff).Order("id").Find(&dead).Error; err != nil {
		return fmt.Errorf("find silent nodes: %w", err)
	}
	for _, d := range dead {
		res := m.o.DB.WithContext(ctx).Where("id = ? AND heartbeat_at < ?", d.ID, cutoff).Delete(&row{})
		if res.Error != nil {
			return fmt.Errorf("forget silent node %s: %w", d.ID, res.Error)
		}
		if res.RowsAffected == 1 {
			m.o.Logger.Warn("a node stopped without leaving the fleet (killed or cut off): its row is removed",
				"node", d.ID, "version", d.Version, "started_at", d.StartedAt.UTC(), "last_heartbeat_at", d.HeartbeatAt.UTC(),
				"silent_for", now.Sub(d.HeartbeatAt).Round(time.Second).String())
		}
	}
	return nil
}

// Live is how many nodes were live (a heartbeat within three intervals), this one
// included, at the last beat; at least 1.
func (m *Membership) Live() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(len(m.live), 1)
}

// LiveNodes are the ids of the nodes live at the last beat, this one always among them;
// nil when no beat read them within two intervals (a peer that joined since would be
// missing).
func (m *Membership) LiveNodes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.beat.IsZero() || m.o.Now().Sub(m.beat) > 2*m.o.Interval {
		return nil
	}
	if !slices.Contains(m.live, m.o.Node) {
		return append(slices.Clone(m.live), m.o.Node)
	}
	return slices.Clone(m.live)
}

// Run beats every interval until ctx ends, then deletes this node's row (it left the
// fleet; its peers stop comparing with it at once).
func (m *Membership) Run(ctx context.Context) {
	t := time.NewTicker(m.o.Interval)
	defer t.Stop()
	for {
		if err := m.Beat(ctx); err != nil && ctx.Err() == nil {
			m.o.Logger.Warn("node heartbeat", "err", err)
		}
		select {
		case <-ctx.Done():
			leaveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := m.o.DB.WithContext(leaveCtx).Where("id = ?", m.o.Node).Delete(&row{}).Error; err != nil {
				m.o.Logger.Warn("leave the fleet", "err", err)
				return
			}
			m.o.Logger.Info("this node left the fleet", "node", m.o.Node)
			return
		case <-t.C:
		}
	}
}

// Difference is a live peer whose settings differ from this node's, and the names of
// the settings that differ (set on one side only, or to other values).
type Difference struct {
	Node     string   `json:"node"`
	Version  string   `json:"version"`
	Settings []string `json:"settings"`
}

// Differences lists the live peers (a heartbeat within three intervals) whose
// settings differ from this node's as of its last beat; none before the first beat.
func (m *Membership) Differences(ctx context.Context) ([]Difference, error) {
	m.mu.Lock()
	mine := m.last
	m.mu.Unlock()
	if mine == nil {
		return nil, nil
	}
	since := m.o.Now().UTC().Add(-3 * m.o.Interval)
	var peers []row
	err := m.o.DB.WithContext(ctx).Where("id <> ? AND heartbeat_at >= ? AND fingerprint <> ?", m.o.Node, since, Fingerprint(mine)).
		Order("id").Find(&peers).Error
	if err != nil {
		return nil, fmt.Errorf("read the peers' settings: %w", err)
	}
	var out []Difference
	for _, p := range peers {
		var theirs Settings
		if err := json.Unmarshal([]byte(p.Settings), &theirs); err != nil {
			return nil, errors.Join(fmt.Errorf("decode node %s's settings", p.ID), err)
		}
		out = append(out, Difference{Node: p.ID, Version: p.Version, Settings: differing(mine, theirs)})
	}
	return out, nil
}

// differing returns the sorted names of the settings a and b do not share.
func differing(a, b Settings) []string {
	var names []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			names = append(names, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}
