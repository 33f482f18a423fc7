package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// devSecretKey returns the key `touchpoint dev` keeps in its data dir,
// creating it on first start, so client secrets and signing keys stay
// valid across restarts.
func devSecretKey(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if key := strings.TrimSpace(string(b)); len(key) >= 32 {
			return key, nil
		}
		return "", fmt.Errorf("%s holds no usable key; delete it to make a new one", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", err
	}
	return key, nil
}

// newSecretFunc makes new client secrets hashed with cfg's secret key.
func newSecretFunc(cfg config.Config) func() (string, []byte) {
	key := secretkey.Derive(cfg.SecretKey, secretkey.ClientSecret)
	return func() (string, []byte) { return authserver.NewClientSecret(key) }
}

// Names of what `touchpoint dev` seeds.
const (
	devAccountName = "Dev"
	devClientName  = "dev"
	// devOwner is the dev account's owner, who signs in to the console
	// with a link that lands in the dev outbox like every mail.
	devOwner = "dev@touchpoint.localhost"
)

// devCredentials are the seeded account's ids and its client's fresh secret.
type devCredentials struct {
	AccountID, ChannelID, ClientID, ClientSecret string
}

// seedDev finds or creates the dev account with its owner and a
// full-access client, and gives the client a new secret (only its hash is
// stored, so the secret can be printed only when it is made).
func seedDev(ctx context.Context, st *store.Store, newSecret func() (string, []byte)) (devCredentials, error) {
	creds, err := seedDevAccount(ctx, st, newSecret)
	if err != nil {
		return creds, err
	}
	ps := storeset.People(st)
	if _, err := ps.PersonByEmail(ctx, devOwner); errors.Is(err, store.ErrNotFound) {
		if _, err := ps.CreatePerson(ctx, people.Operator, creds.AccountID, devOwner, people.Owner); err != nil {
			return creds, fmt.Errorf("seed the dev owner: %w", err)
		}
	} else if err != nil {
		return creds, fmt.Errorf("find the dev owner: %w", err)
	}
	return creds, nil
}

// seedDevAccount finds or creates the dev account and its client.
func seedDevAccount(ctx context.Context, st *store.Store, newSecret func() (string, []byte)) (devCredentials, error) {
	acc, err := st.Accounts.AccountByName(ctx, devAccountName)
	var channelID string
	switch {
	case errors.Is(err, store.ErrNotFound):
		var ch accountdb.Channel
		if acc, ch, err = st.Accounts.CreateAccount(ctx, devAccountName); err != nil {
			return devCredentials{}, fmt.Errorf("seed dev account: %w", err)
		}
		channelID = ch.ID
	case err != nil:
		return devCredentials{}, fmt.Errorf("find dev account: %w", err)
	default:
		ch, err := st.Accounts.DefaultChannel(ctx, acc.ID)
		if err != nil {
			return devCredentials{}, fmt.Errorf("find dev channel: %w", err)
		}
		channelID = ch.ID
	}
	secret, hash := newSecret()
	clients, err := st.Auth.ListClients(ctx, acc.ID)
	if err != nil {
		return devCredentials{}, fmt.Errorf("find dev client: %w", err)
	}
	for _, c := range clients {
		if c.Name == devClientName && c.Issuer == "" {
			if err := st.Auth.SetClientSecret(ctx, c.ID, hash); err != nil {
				return devCredentials{}, fmt.Errorf("rotate dev client secret: %w", err)
			}
			return devCredentials{acc.ID, channelID, c.ClientID, secret}, nil
		}
	}
	c, err := st.Auth.CreateClient(ctx, acc.ID, devClientName, auth.GroupFull, hash)
	if err != nil {
		return devCredentials{}, fmt.Errorf("seed dev client: %w", err)
	}
	return devCredentials{acc.ID, channelID, c.ClientID, secret}, nil
}
