package runs

import "github.com/switchboard-hub/switchboard/keyring"

// SealedRecords returns the runs' sealed inputs, outputs and input requests as records for key rotation
// (`switchboard keys rotate`). A re-seal applies only while the run keeps its state, so
// an output written meanwhile is never lost.
func (s *Store) SealedRecords() keyring.SealedRecords {
	return &keyring.SealedTable{
		DB: s.db, Keyring: s.kr, Name: "runs", Table: "runs", Columns: []string{"state"},
		Parts: []keyring.SealedColumns{
			{Sealed: "input_sealed", KeyID: "input_key_id", AAD: func(r keyring.SealedRow) []byte { return sealAAD(r.TenantID, r.ID, partInput) }},
			{Sealed: "output_sealed", KeyID: "output_key_id", AAD: func(r keyring.SealedRow) []byte { return sealAAD(r.TenantID, r.ID, partOutput) }},
			{Sealed: "input_requests_sealed", KeyID: "input_requests_key_id", AAD: func(r keyring.SealedRow) []byte { return sealAAD(r.TenantID, r.ID, partInputRequests) }},
		},
	}
}
