package apiserver

import (
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// attemptOut is one send attempt of an event. The stored
// event lists them as invite.attemptHistory, oldest first: invite.attempts
// stays the count it always was, so clients that read it as a number keep
// working, and attemptHistory holds the attempts themselves, kept across
// retries. kind tells the invite's attempts from its reminder's, which
// are numbered on their own.
type attemptOut struct {
	N          int                `json:"n"`
	Kind       invite.Kind        `json:"kind"`
	Medium     *string            `json:"medium"`
	StartedAt  apiwire.Timestamp  `json:"startedAt"`
	FinishedAt *apiwire.Timestamp `json:"finishedAt"`
	// Outcome is null while the attempt runs.
	Outcome *invite.Outcome `json:"outcome"`
	Detail  *string         `json:"detail"`
	// Template names the template the message was rendered from (source
	// and version); null where none was recorded.
	Template *invitedb.AttemptTemplate `json:"template"`
	// ProviderEvents is what the mail provider reported of the message
	// after its relay took it, oldest first; [] when nothing.
	ProviderEvents []providerEventOut `json:"providerEvents"`
}

// attemptsOut converts the event's attempts; never null.
func attemptsOut(e invitedb.Event) ([]attemptOut, error) {
	all, err := e.History()
	if err != nil {
		return nil, err
	}
	out := make([]attemptOut, len(all))
	for i, a := range all {
		out[i] = attemptOut{N: a.N, Kind: a.Kind, StartedAt: apiwire.Timestamp(a.StartedAt),
			Medium: nonEmpty(a.Medium), Detail: nonEmpty(a.Detail), Template: a.Template,
			ProviderEvents: providerEventsOut(a.ProviderEvents)}
		if a.FinishedAt != nil {
			t := apiwire.Timestamp(*a.FinishedAt)
			out[i].FinishedAt = &t
		}
		if a.Outcome != "" {
			o := a.Outcome
			out[i].Outcome = &o
		}
	}
	return out, nil
}

// nonEmpty is s, or nil for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
