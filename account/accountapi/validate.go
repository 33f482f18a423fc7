package accountapi

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/text"
)

// MaxNameLen bounds event type and channel names, in characters (and so
// the type an event names, which the API checks alike).
const MaxNameLen = 100

// checkName validates an event type or channel name. Names are stored
// exactly as sent because events match event types by exact name; so
// instead of trimming silently, surrounding white space is rejected.
func checkName(v string) string {
	switch {
	case v == "":
		return "must not be empty"
	case utf8.RuneCountInString(v) > MaxNameLen:
		return fmt.Sprintf("must be at most %d characters", MaxNameLen)
	case strings.TrimSpace(v) != v:
		return "must not start or end with white space"
	}
	if err := text.Check(text.Name, v); err != nil {
		return err.Error()
	}
	return ""
}

// channelType is the slug of a channel's integration.
var channelType = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

const maxChannelTypeLen = 50

func checkChannelType(v string) string {
	if len(v) > maxChannelTypeLen || !channelType.MatchString(v) {
		return fmt.Sprintf(`must be a lowercase slug of at most %d characters (letters, digits, "_" and "-", starting with a letter), e.g. "native" or "shopify"`, maxChannelTypeLen)
	}
	return ""
}
