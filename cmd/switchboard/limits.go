package main

import (
	"context"
	"log/slog"

	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// sharedLimits are where connections' rate limits and tenants' run bounds live: in
// Redis when SWITCHBOARD_REDIS_URL is set, shared by the fleet; otherwise in this
// process (upstream is a limits.Local and slots nil), which suits one node.
type sharedLimits struct {
	upstream limits.Upstream
	slots    limits.Slots
	close    func()
}

// openLimits opens the shared limits. nodes is how many nodes are live, for each one's
// share of a limit while Redis cannot be reached. An unreachable Redis does not stop
// the node from starting: it runs on its share until Redis answers, and says so.
func openLimits(ctx context.Context, cfg config, nodes func() int, tel *telemetry.Telemetry, log *slog.Logger) (sharedLimits, error) {
	if cfg.RedisURL == "" {
		return sharedLimits{upstream: limits.NewLocal(), close: func() {}}, nil
	}
	r, err := limits.NewRedis(limits.RedisOptions{URL: cfg.RedisURL, Nodes: nodes, Timeout: cfg.RedisTimeout, Logger: log})
	if err != nil {
		return sharedLimits{}, &configError{"SWITCHBOARD_REDIS_URL", err.Error()}
	}
	if err := tel.Metrics().SharedLimits(r.Degraded, r.Fallbacks); err != nil {
		_ = r.Close()
		return sharedLimits{}, err
	}
	if err := r.Ping(ctx); err != nil {
		log.Warn("redis does not answer at start: rate limits and run bounds use this node's share until it does", "err", err)
	} else {
		log.Info("rate limits and run bounds are shared through redis")
	}
	return sharedLimits{upstream: r, slots: r, close: func() { _ = r.Close() }}, nil
}
