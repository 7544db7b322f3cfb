package connections

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// sealAAD binds a ciphertext to its row: a blob copied to another connection or
// tenant does not open.
func sealAAD(tenant switchboard.TenantID, connectionID string) []byte {
	return []byte("switchboard/connection/v1\x00" + string(tenant) + "\x00" + connectionID)
}

// sealCredentials seals the credentials of one connection.
func sealCredentials(ctx context.Context, kr keyring.Keyring, tenant switchboard.TenantID, connectionID string, creds Credentials) ([]byte, string, error) {
	plaintext, err := json.Marshal(creds)
	if err != nil {
		return nil, "", fmt.Errorf("encode credentials: %w", err)
	}
	sealed, keyID, err := kr.Seal(ctx, plaintext, sealAAD(tenant, connectionID))
	clear(plaintext)
	if err != nil {
		return nil, "", fmt.Errorf("seal credentials: %w", err)
	}
	return sealed, keyID, nil
}

// openCredentials opens what sealCredentials sealed for the same tenant and connection.
func openCredentials(ctx context.Context, kr keyring.Keyring, c *Connection) (Credentials, error) {
	plaintext, err := kr.Open(ctx, c.KeyID, c.Sealed, sealAAD(c.TenantID, c.ID))
	if err != nil {
		return Credentials{}, &switchboard.Error{Code: switchboard.CodeInternal, Message: "credentials do not open", Err: fmt.Errorf("open connection %s: %w", c.ID, err)}
	}
	defer clear(plaintext)
	var creds Credentials
	if err := json.Unmarshal(plaintext, &creds); err != nil {
		return Credentials{}, &switchboard.Error{Code: switchboard.CodeInternal, Message: "credentials do not open", Err: fmt.Errorf("decode credentials of connection %s: %w", c.ID, err)}
	}
	return creds, nil
}
