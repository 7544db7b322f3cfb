package keyring

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vault "github.com/hashicorp/vault/api"
)

// VaultOptions configure a VaultKeyring; zero values take the defaults.
type VaultOptions struct {
	Address string // Vault's URL, for example https://vault.internal:8200
	Token   string // a token allowed to use the transit key (datakey, decrypt, read; rotate for key rotation)
	Mount   string // where the transit engine is mounted; default "transit"
	Key     string // the transit key's name; it must exist and support encryption

	// CacheSize bounds how many unwrapped data keys stay in memory; default 1024.
	CacheSize int
	// CacheTTL bounds how long an unwrapped data key stays in memory; default 15 minutes.
	CacheTTL time.Duration
	// Timeout bounds each request to Vault; default 30 seconds.
	Timeout time.Duration
	// Now is the clock of the cache's TTL; default time.Now.
	Now func() time.Time
}

// VaultKeyring is a Keyring that seals with envelope encryption under a HashiCorp Vault
// Transit key. Every Seal asks Transit for a fresh 256-bit data key (datakey/plaintext),
// encrypts locally with AES-256-GCM under it, and stores the data key wrapped by
// Transit in front of the ciphertext. Open asks Transit to unwrap the data key, and
// keeps unwrapped data keys in a cache bounded in size and age, so Vault sees one
// request per record rather than one per use. The key ID of a record names the
// Transit key and the version that wrapped its data key: "vault:transit/NAME:vN".
type VaultKeyring struct {
	client *vault.Client
	mount  string
	key    string
	prefix string // "vault:MOUNT/KEY:v"
	cache  *dekCache

	datakeys atomic.Int64 // data keys drawn from Transit
	unwraps  atomic.Int64 // data keys unwrapped by Transit
}

var (
	_ Keyring = (*VaultKeyring)(nil)
	_ Rotator = (*VaultKeyring)(nil)
)

// sealedV1 is the first byte of a VaultKeyring ciphertext: the format's version. The
// layout is sealedV1, uvarint length of the wrapped data key, the wrapped data key
// (Transit's "vault:vN:…"), a 12-byte nonce, and the AES-256-GCM ciphertext and tag.
const sealedV1 = 0x01

// NewVaultKeyring connects to Vault and checks that the Transit key exists and can
// encrypt; it does not create the key.
func NewVaultKeyring(ctx context.Context, opts VaultOptions) (*VaultKeyring, error) {
	switch {
	case opts.Address == "":
		return nil, errors.New("vault keyring: the Vault address is required")
	case opts.Token == "":
		return nil, errors.New("vault keyring: a Vault token is required")
	case opts.Key == "":
		return nil, errors.New("vault keyring: the transit key name is required")
	case strings.ContainsAny(opts.Key, "/:") || strings.Contains(opts.Mount, ":"):
		return nil, fmt.Errorf("vault keyring: transit key %q or mount %q has a character key IDs cannot carry", opts.Key, opts.Mount)
	}
	if opts.Mount == "" {
		opts.Mount = "transit"
	}
	opts.Mount = strings.Trim(opts.Mount, "/")
	if opts.CacheSize <= 0 {
		opts.CacheSize = 1024
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 15 * time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cfg := vault.DefaultConfig()
	if cfg.Error != nil {
		return nil, fmt.Errorf("vault keyring: %w", cfg.Error)
	}
	cfg.Address = opts.Address
	cfg.Timeout = opts.Timeout
	client, err := vault.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("vault keyring: %w", err)
	}
	client.SetToken(opts.Token)
	k := &VaultKeyring{
		client: client,
		mount:  opts.Mount,
		key:    opts.Key,
		prefix: "vault:" + opts.Mount + "/" + opts.Key + ":v",
		cache:  newDEKCache(opts.CacheSize, opts.CacheTTL, opts.Now),
	}
	info, err := k.readKey(ctx)
	if err != nil {
		return nil, err
	}
	if enc, _ := info["supports_encryption"].(bool); !enc {
		return nil, fmt.Errorf("vault keyring: transit key %s/keys/%s cannot encrypt (type %v); use an aes256-gcm96 key", k.mount, k.key, info["type"])
	}
	return k, nil
}

// KeyName is the Transit key's path, "MOUNT/keys/NAME".
func (k *VaultKeyring) KeyName() string { return k.mount + "/keys/" + k.key }

// Seal encrypts plaintext under a fresh data key from Transit.
func (k *VaultKeyring) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, string, error) {
	sec, err := k.client.Logical().WriteWithContext(ctx, k.mount+"/datakey/plaintext/"+k.key, map[string]any{"bits": 256})
	if err != nil {
		return nil, "", fmt.Errorf("seal: data key from vault %s: %w", k.KeyName(), err)
	}
	if sec == nil || sec.Data == nil {
		return nil, "", fmt.Errorf("seal: vault %s answered no data key", k.KeyName())
	}
	k.datakeys.Add(1)
	wrapped, _ := sec.Data["ciphertext"].(string)
	b64, _ := sec.Data["plaintext"].(string)
	dek, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(dek) != 32 {
		return nil, "", fmt.Errorf("seal: vault %s answered a data key that is not 32 bytes", k.KeyName())
	}
	version, err := wrappedVersion(wrapped)
	if err != nil {
		return nil, "", fmt.Errorf("seal: vault %s: %w", k.KeyName(), err)
	}
	aead, err := newGCM(dek)
	clear(dek)
	if err != nil {
		return nil, "", fmt.Errorf("seal: %w", err)
	}
	k.cache.put(wrapped, aead)

	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(wrapped)+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out = append(out, sealedV1)
	out = binary.AppendUvarint(out, uint64(len(wrapped)))
	out = append(out, wrapped...)
	nonceAt := len(out)
	out = out[:nonceAt+aead.NonceSize()]
	if _, err := rand.Read(out[nonceAt:]); err != nil {
		return nil, "", fmt.Errorf("seal: %w", err)
	}
	out = aead.Seal(out, out[nonceAt:], plaintext, aad)
	return out, k.prefix + strconv.FormatInt(version, 10), nil
}

// Open decrypts what Seal sealed with the same additional data, unwrapping its data
// key with Transit unless the cache holds it.
func (k *VaultKeyring) Open(ctx context.Context, keyID string, ciphertext, aad []byte) ([]byte, error) {
	version, ok := strings.CutPrefix(keyID, k.prefix)
	if !ok {
		return nil, fmt.Errorf("open: key %q is not of vault transit key %s", keyID, k.KeyName())
	}
	if len(ciphertext) == 0 || ciphertext[0] != sealedV1 {
		return nil, errors.New("open: not a vault keyring ciphertext of a known format")
	}
	n, read := binary.Uvarint(ciphertext[1:])
	if read <= 0 || n == 0 {
		return nil, errors.New("open: ciphertext is malformed")
	}
	start := 1 + read
	if n > uint64(len(ciphertext)) || start+int(n)+12+16 > len(ciphertext) {
		return nil, errors.New("open: ciphertext too short")
	}
	end := start + int(n)
	wrapped := string(ciphertext[start:end])
	if v, err := wrappedVersion(wrapped); err != nil || strconv.FormatInt(v, 10) != version {
		return nil, fmt.Errorf("open: the data key was not wrapped by key %q", keyID)
	}
	aead, ok := k.cache.get(wrapped)
	if !ok {
		var err error
		if aead, err = k.unwrap(ctx, wrapped); err != nil {
			return nil, err
		}
		k.cache.put(wrapped, aead)
	}
	nonce := ciphertext[end : end+aead.NonceSize()]
	plaintext, err := aead.Open(nil, nonce, ciphertext[end+aead.NonceSize():], aad)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return plaintext, nil
}

// unwrap asks Transit to decrypt a wrapped data key.
func (k *VaultKeyring) unwrap(ctx context.Context, wrapped string) (cipher.AEAD, error) {
	sec, err := k.client.Logical().WriteWithContext(ctx, k.mount+"/decrypt/"+k.key, map[string]any{"ciphertext": wrapped})
	if err != nil {
		return nil, fmt.Errorf("open: unwrap the data key with vault %s: %w", k.KeyName(), err)
	}
	if sec == nil || sec.Data == nil {
		return nil, fmt.Errorf("open: vault %s answered no data key", k.KeyName())
	}
	k.unwraps.Add(1)
	b64, _ := sec.Data["plaintext"].(string)
	dek, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(dek) != 32 {
		return nil, fmt.Errorf("open: vault %s unwrapped a data key that is not 32 bytes", k.KeyName())
	}
	defer clear(dek)
	aead, err := newGCM(dek)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return aead, nil
}

// ActiveKeyID reads the Transit key's newest version: the key ID Seal reports now.
func (k *VaultKeyring) ActiveKeyID(ctx context.Context) (string, error) {
	info, err := k.readKey(ctx)
	if err != nil {
		return "", err
	}
	v, err := number(info["latest_version"])
	if err != nil || v < 1 {
		return "", fmt.Errorf("vault %s: latest_version %v is not a version", k.KeyName(), info["latest_version"])
	}
	return k.prefix + strconv.FormatInt(v, 10), nil
}

// Rotate makes Transit add a new version of the key, which wraps every data key from
// then on (in every process: Transit answers with its newest version), and returns its
// key ID. Older versions still unwrap unless an operator raises the key's
// min_decryption_version, which should wait until `switchboard keys rotate` finishes.
func (k *VaultKeyring) Rotate(ctx context.Context) (string, error) {
	if _, err := k.client.Logical().WriteWithContext(ctx, k.mount+"/keys/"+k.key+"/rotate", nil); err != nil {
		return "", fmt.Errorf("rotate vault %s: %w", k.KeyName(), err)
	}
	return k.ActiveKeyID(ctx)
}

// Derive returns a 32-byte secret for one purpose: Transit's HMAC-SHA-256 of the
// purpose under the key's newest version. Like LocalKeyring.Derive it is stable across
// restarts, differs per purpose, and changes when the key rotates; the key never
// leaves Vault.
func (k *VaultKeyring) Derive(ctx context.Context, purpose string) ([]byte, error) {
	input := base64.StdEncoding.EncodeToString([]byte("switchboard/derive/v1\x00" + purpose))
	sec, err := k.client.Logical().WriteWithContext(ctx, k.mount+"/hmac/"+k.key+"/sha2-256", map[string]any{"input": input})
	if err != nil {
		return nil, fmt.Errorf("derive %s with vault %s: %w", purpose, k.KeyName(), err)
	}
	if sec == nil || sec.Data == nil {
		return nil, fmt.Errorf("derive %s: vault %s answered no hmac", purpose, k.KeyName())
	}
	mac, _ := sec.Data["hmac"].(string)
	i := strings.LastIndexByte(mac, ':')
	sum, err := base64.StdEncoding.DecodeString(mac[i+1:])
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("derive %s: vault %s answered a malformed hmac", purpose, k.KeyName())
	}
	return sum, nil
}

// VaultStats count a VaultKeyring's work since it was made.
type VaultStats struct {
	DataKeys   int64 // data keys drawn from Transit (one per Seal)
	Unwraps    int64 // data keys Transit unwrapped (cache misses of Open)
	CachedKeys int   // unwrapped data keys in memory now
}

// Stats returns the keyring's counters.
func (k *VaultKeyring) Stats() VaultStats {
	return VaultStats{DataKeys: k.datakeys.Load(), Unwraps: k.unwraps.Load(), CachedKeys: k.cache.len()}
}

func (k *VaultKeyring) readKey(ctx context.Context) (map[string]any, error) {
	sec, err := k.client.Logical().ReadWithContext(ctx, k.mount+"/keys/"+k.key)
	if err != nil {
		var re *vault.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("vault keyring: the token may not read %s: %w", k.KeyName(), err)
		}
		return nil, fmt.Errorf("vault keyring: read %s: %w", k.KeyName(), err)
	}
	if sec == nil || sec.Data == nil {
		return nil, fmt.Errorf("vault keyring: transit key %s does not exist; create it with `vault write -f %s`", k.KeyName(), k.KeyName())
	}
	return sec.Data, nil
}

// wrappedVersion reads N from Transit's ciphertext "vault:vN:…".
func wrappedVersion(wrapped string) (int64, error) {
	rest, ok := strings.CutPrefix(wrapped, "vault:v")
	if !ok {
		return 0, errors.New("wrapped data key is not a transit ciphertext")
	}
	num, _, ok := strings.Cut(rest, ":")
	v, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || v < 1 {
		return 0, errors.New("wrapped data key has no key version")
	}
	return v, nil
}

// number reads a JSON number Vault's client decoded as json.Number (or float64).
func number(v any) (int64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Int64()
	case float64:
		return int64(n), nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
