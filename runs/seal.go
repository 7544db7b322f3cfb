package runs

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard"
)

// sealAAD binds a sealed input or output to its run, tenant and purpose: a blob copied
// to another run, tenant or column does not open.
func sealAAD(tenant switchboard.TenantID, runID, part string) []byte {
	return []byte("switchboard/run/v1\x00" + string(tenant) + "\x00" + runID + "\x00" + part)
}

func (s *Store) seal(ctx context.Context, tenant switchboard.TenantID, runID, part string, plaintext []byte) ([]byte, string, error) {
	sealed, keyID, err := s.kr.Seal(ctx, plaintext, sealAAD(tenant, runID, part))
	if err != nil {
		return nil, "", fmt.Errorf("seal %s of run %s: %w", part, runID, err)
	}
	return sealed, keyID, nil
}

func (s *Store) open(ctx context.Context, r *Run, part string) ([]byte, error) {
	sealed, keyID := r.InputSealed, r.InputKeyID
	switch part {
	case partOutput:
		sealed, keyID = r.OutputSealed, r.OutputKeyID
	case partInputRequests:
		sealed, keyID = r.InputRequestsSealed, r.InputRequestsKeyID
	}
	plaintext, err := s.kr.Open(ctx, keyID, sealed, sealAAD(r.TenantID, r.ID, part))
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("open %s of run %s: %w", part, r.ID, err))
	}
	return plaintext, nil
}

const (
	partInput         = "input"
	partOutput        = "output"
	partInputRequests = "input_requests"
)
