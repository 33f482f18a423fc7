package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/touchpoint/touchpoint/webhook"
)

// A shop's receiver verifies each delivery with a Standard Webhooks
// library and the endpoint's secret, then uses webhook-id to ignore
// repeats: a delivery can arrive more than once, never with another id.
func Example() {
	secret, err := webhook.NewSecret() // what POST /webhooks answers, once
	if err != nil {
		panic(err)
	}

	// The shop's side.
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		panic(err)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		// Verify the raw bytes before parsing them; Verify also rejects
		// timestamps more than five minutes off.
		if err := verifier.Verify(body, r.Header); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var msg struct {
			Type string `json:"type"`
			Data struct {
				EventID string `json:"eventId"`
				Status  string `json:"status"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		fmt.Println("received", r.Header.Get("webhook-id"), msg.Type, msg.Data.EventID, msg.Data.Status)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	// Touchpoint's side: the message is marshalled once, stored, and the
	// same bytes are sent on every attempt.
	body, err := json.Marshal(webhook.Message{
		Type:      webhook.InviteSent,
		Timestamp: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Data: webhook.InviteData{
			EventID: "evt-3f0c", EventTypeID: "ety-9a21", ChannelID: "chl-77d0",
			Status: "sent", Medium: "email", SentAt: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		},
	})
	if err != nil {
		panic(err)
	}
	client := webhook.NewClient(webhook.Options{AllowPrivate: true}) // the receiver is on 127.0.0.1
	result := client.Deliver(context.Background(), webhook.Delivery{
		URL: receiver.URL, MsgID: "msg-5b2e", Body: body, Secrets: []string{secret},
	})
	fmt.Println(result.Outcome, result.StatusCode)
	// Output:
	// received msg-5b2e invite.sent evt-3f0c sent
	// succeeded 204
}
