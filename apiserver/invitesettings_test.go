package apiserver_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settingPath creates an event type and returns the path of its setting
// on the Default channel.
func settingPath(t *testing.T, e *env) string {
	t.Helper()
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})
	list, _ := items(t, e.get(t, "/invite-settings?eventTypeId="+et["id"].(string)))
	require.Len(t, list, 1)
	return "/invite-settings/" + list[0]["id"].(string)
}

func TestPatchInviteSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := settingPath(t, e)
	before := e.get(t, path).object(t)

	patch := func(body string) response { return e.do(t, http.MethodPatch, path, e.token, body) }
	r := patch(`{"active":false,"medium":"sms","delay":"PT10M","delayFrom":"delivery",
		"sendWindow":{"start":"22:00","end":"06:00","timeZone":"Europe/Berlin"},"minDaysBetweenInvites":0,
		"reminder":{"delay":"P3D"}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got := r.object(t)
	assert.Equal(t, map[string]any{"id": before["id"], "channelId": before["channelId"], "eventTypeId": before["eventTypeId"],
		"active": false, "medium": "sms", "delay": "PT10M", "delayFrom": "delivery",
		"sendWindow":            map[string]any{"start": "22:00", "end": "06:00", "timeZone": "Europe/Berlin"},
		"minDaysBetweenInvites": float64(0), "reminder": map[string]any{"delay": "P3D"},
		"createdAt": before["createdAt"], "updatedAt": got["updatedAt"]}, got)
	assert.Regexp(t, timestampRE, got["updatedAt"])
	assert.GreaterOrEqual(t, got["updatedAt"], before["updatedAt"])
	assert.Equal(t, got, e.get(t, path).object(t))

	// Merge patch: missing members are kept, sendWindow merges member by
	// member, the delay is returned as sent.
	r = patch(`{"sendWindow":{"end":"07:30"},"delay":"P2W","minDaysBetweenInvites":365}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got = r.object(t)
	assert.Equal(t, map[string]any{"start": "22:00", "end": "07:30", "timeZone": "Europe/Berlin"}, got["sendWindow"])
	assert.Equal(t, "P2W", got["delay"])
	assert.Equal(t, "sms", got["medium"])
	assert.Equal(t, false, got["active"])

	r = patch(`{"sendWindow":null}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Nil(t, r.object(t)["sendWindow"])
	for _, delay := range []string{"P0D", "PT0S", "P180D", "P1DT2H3M4S"} {
		r = patch(`{"delay":"` + delay + `"}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, delay, r.object(t)["delay"])
	}
	unchanged := patch(`{}`)
	require.Equal(t, http.StatusOK, unchanged.status)
	assert.Equal(t, e.get(t, path).object(t), unchanged.object(t))

	// A new window needs all three members.
	r = patch(`{"sendWindow":{"start":"09:00"}}`)
	requireProblem(t, r, http.StatusBadRequest, "sendWindow.end", "sendWindow.timeZone")
	assert.Contains(t, fieldMessage(t, r, "sendWindow.end"), "required")

	cases := []struct{ body, field, message string }{
		{`{"active":"false"}`, "active", "must be a boolean, not a string"},
		{`{"active":null}`, "active", "must not be null"},
		{`{"medium":"fax"}`, "medium", "must be one of: email, sms"},
		{`{"medium":"EMAIL"}`, "medium", "must be one of"},
		{`{"medium":null}`, "medium", "must not be null"},
		{`{"delay":"P1M"}`, "delay", "years and months"},
		{`{"delay":"P181D"}`, "delay", "180 days"},
		{`{"delay":"p7d"}`, "delay", "upper case"},
		{`{"delay":"-P1D"}`, "delay", "signed"},
		{`{"delay":"P"}`, "delay", "no components"},
		{`{"delay":"PT"}`, "delay", "no hours"},
		{`{"delay":7}`, "delay", "must be a string, not a number"},
		{`{"delay":null}`, "delay", "must not be null"},
		{`{"delayFrom":"order"}`, "delayFrom", "must be one of: event, transaction, delivery"},
		{`{"minDaysBetweenInvites":366}`, "minDaysBetweenInvites", "from 0 to 365"},
		{`{"minDaysBetweenInvites":-1}`, "minDaysBetweenInvites", "from 0 to 365"},
		{`{"minDaysBetweenInvites":1.5}`, "minDaysBetweenInvites", "must be an integer"},
		{`{"minDaysBetweenInvites":"30"}`, "minDaysBetweenInvites", "must be an integer, not a string"},
		{`{"minDaysBetweenInvites":99999999999999999999}`, "minDaysBetweenInvites", "out of range"},
		{`{"sendWindow":"09:00-17:00"}`, "sendWindow", "must be an object, not a string"},
		{`{"sendWindow":{"start":"9:00","end":"17:00","timeZone":"UTC"}}`, "sendWindow.start", "HH:MM"},
		{`{"sendWindow":{"start":"09:00","end":"24:00","timeZone":"UTC"}}`, "sendWindow.end", "between 00:00 and 23:59"},
		{`{"sendWindow":{"start":"09:00","end":"09:00","timeZone":"UTC"}}`, "sendWindow.end", "must differ from start"},
		{`{"sendWindow":{"start":"09:00","end":"17:00","timeZone":"Europe/Atlantis"}}`, "sendWindow.timeZone", "IANA"},
		{`{"sendWindow":{"start":"09:00","end":"17:00","timeZone":"Local"}}`, "sendWindow.timeZone", "Local"},
		{`{"sendWindow":{"start":"09:00","end":"17:00","timeZone":""}}`, "sendWindow.timeZone", "IANA"},
		{`{"sendWindow":{"start":"09:00","end":"17:00","timeZone":null}}`, "sendWindow.timeZone", "must not be null"},
		{`{"sendWindow":{"start":"09:00","end":"17:00","timezone":"UTC"}}`, "sendWindow.timezone", `did you mean "timeZone"?`},
		{`{"send_window":null}`, "send_window", `did you mean "sendWindow"?`},
		{`{"Medium":"sms"}`, "Medium", `case-sensitive); did you mean "medium"?`},
		{`{"id":"ist-x"}`, "id", "read-only"},
		{`{"channelId":"chl-x"}`, "channelId", "read-only"},
		{`{"eventTypeId":"ety-x"}`, "eventTypeId", "read-only"},
		{`{"createdAt":"2026-01-01T00:00:00.000Z"}`, "createdAt", "read-only"},
		{`{"updatedAt":"2026-01-01T00:00:00.000Z"}`, "updatedAt", "read-only"},
		{`{"active":true,"active":false}`, "active", "duplicated key"},
	}
	for _, tc := range cases {
		r := patch(tc.body)
		requireProblem(t, r, http.StatusBadRequest, tc.field)
		assert.Contains(t, fieldMessage(t, r, tc.field), tc.message, tc.body)
	}

	// Every error of a body at once, each with its path.
	r = patch(`{"medium":"fax","delay":"P1Y","delayFrom":"x","minDaysBetweenInvites":400,
		"sendWindow":{"start":"25:00","end":"x","timeZone":"Nowhere"}}`)
	requireProblem(t, r, http.StatusBadRequest, "medium", "delay", "delayFrom", "minDaysBetweenInvites",
		"sendWindow.start", "sendWindow.end", "sendWindow.timeZone")
	assert.Equal(t, e.get(t, path).object(t), unchanged.object(t), "a rejected patch changes nothing")
}

// Concurrent patches of different fields both survive: the merge runs
// under the row lock.
func TestConcurrentPatchesKeepEachOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := settingPath(t, e)
	var wg sync.WaitGroup
	for _, body := range []string{`{"medium":"sms"}`, `{"delay":"PT1H"}`, `{"active":false}`, `{"minDaysBetweenInvites":7}`, `{"delayFrom":"transaction"}`} {
		wg.Go(func() {
			r := e.do(t, http.MethodPatch, path, e.token, body)
			assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
		})
	}
	wg.Wait()
	got := e.get(t, path).object(t)
	assert.Equal(t, "sms", got["medium"])
	assert.Equal(t, "PT1H", got["delay"])
	assert.Equal(t, false, got["active"])
	assert.Equal(t, float64(7), got["minDaysBetweenInvites"])
	assert.Equal(t, "transaction", got["delayFrom"])
}

func TestPatchInviteSettingReminder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := settingPath(t, e)
	patch := func(body string) response { return e.do(t, http.MethodPatch, path, e.token, body) }

	assert.Nil(t, e.get(t, path).object(t)["reminder"], "no reminder by default")
	r := patch(`{"reminder":{"delay":"PT36H"}}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"delay": "PT36H"}, r.object(t)["reminder"])

	for body, field := range map[string]string{
		`{"reminder":{"delay":"P31D"}}`:      "reminder.delay",
		`{"reminder":{"delay":"3 days"}}`:    "reminder.delay",
		`{"reminder":{}}`:                    "reminder.delay",
		`{"reminder":{"delay":"P1D","x":1}}`: "reminder.x",
		`{"reminder":"P1D"}`:                 "reminder",
	} {
		r := patch(body)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", body, r.body)
		assert.Contains(t, string(r.body), `"field":"`+field+`"`, body)
	}
	assert.Equal(t, map[string]any{"delay": "PT36H"}, e.get(t, path).object(t)["reminder"], "a bad patch changes nothing")

	r = patch(`{"reminder":null}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Nil(t, r.object(t)["reminder"], "null removes the reminder")
}
