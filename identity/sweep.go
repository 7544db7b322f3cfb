package identity

import (
	"context"
	"fmt"
	"time"
)

// sweepEvery is how often Run deletes what can no longer be used.
const sweepEvery = time.Hour

// usedCodeKept is how long a used or expired code is kept, so a replay within it still
// revokes what the code gave.
const usedCodeKept = 24 * time.Hour

// Sweep deletes codes past their use (a day after they expired), refresh tokens past
// their lifetime, used or not, and single sign-ons never finished; it returns how many
// rows went. Grants stay: they
// are the record of what people allowed.
func (s *Server) Sweep(ctx context.Context, now time.Time) (int64, error) {
	codes := s.o.DB.WithContext(ctx).Where("expires_at < ?", now.Add(-usedCodeKept).UTC()).Delete(&code{})
	if codes.Error != nil {
		return 0, fmt.Errorf("sweep authorization codes: %w", codes.Error)
	}
	tokens := s.o.DB.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&refreshToken{})
	if tokens.Error != nil {
		return codes.RowsAffected, fmt.Errorf("sweep refresh tokens: %w", tokens.Error)
	}
	logins := s.o.DB.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&ssoLogin{})
	if logins.Error != nil {
		return codes.RowsAffected + tokens.RowsAffected, fmt.Errorf("sweep single sign-ons under way: %w", logins.Error)
	}
	return codes.RowsAffected + tokens.RowsAffected + logins.RowsAffected, nil
}

// Run sweeps every hour until ctx ends.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sweep(ctx, s.now()); err != nil && ctx.Err() == nil {
				s.o.Logger.Warn("sweep OAuth codes and refresh tokens", "err", err)
			}
		}
	}
}
