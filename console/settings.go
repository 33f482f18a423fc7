package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/locale"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/text"
)

// settingsPages are the pages of the account's settings: language, branding, invite settings, API clients and people.
type settingsPages struct{ *Handler }

// Settings, for owners: how the shop presents itself (with the contrast
// rules' advice as the colour is chosen), when invites go out, the API
// clients of the shop's systems (a new secret shown once), and the people
// who sign in. The checks are packages brand's, sendtime's and people's;
// the store writes.

// ClientStore is what the settings read and change of the API clients.
type ClientStore interface {
	ListClients(ctx context.Context, accountID string) ([]authdb.Client, error)
	Client(ctx context.Context, id string) (authdb.Client, error)
	CreateClient(ctx context.Context, accountID, name, group string, secretHash []byte) (authdb.Client, error)
	DeleteClient(ctx context.Context, id string) error
}

// PeopleStore is what the settings read and change of the people.
type PeopleStore interface {
	People(ctx context.Context, accountID string) ([]persondb.Person, error)
	CreatePerson(ctx context.Context, by people.Actor, accountID, email string, role people.Role) (persondb.Person, error)
	SetRole(ctx context.Context, by people.Actor, accountID, id string, role people.Role) (persondb.Person, error)
	Disable(ctx context.Context, by people.Actor, accountID, id string) (persondb.Person, int, error)
	SetLanguage(ctx context.Context, by people.Actor, accountID, id, lang string) (persondb.Person, error)
}

type settingsView struct {
	Brand    brand.Brand
	Advice   adviceView
	Settings []inviteSettingRow
	Clients  []authdb.Client
	People   []persondb.Person
	Roles    []people.Role
	Groups   []string
	Errors   fieldErrors
	// What was just made, shown once.
	NewClient       *authdb.Client
	NewClientSecret string
	// The forms, as typed when refused.
	ClientName, ClientGroup, PersonEmail, PersonRole string
	SettingID                                        string // the invite setting whose form was refused
	Me                                               string // the person's own id: no one disables themself here
	CanBrand, CanSettings, CanClients, CanPeople     bool
	// The person's own choice of language ("" for the browser's) and
	// the choices, each named in its own language; CanLanguage: the
	// console keeps people's choices (it has their store).
	CanLanguage   bool
	Language      string
	LanguageCodes []string
	LanguageNames []string
}

// inviteSettingRow is an invite setting with the names of its event type
// and channel.
type inviteSettingRow struct {
	accountdb.InviteSetting
	EventType, Channel string
}

// adviceView says, by the contrast rules, where the shop's colour is used.
type adviceView struct {
	Color          string // "#RRGGBB"; "" for Touchpoint's own
	Valid          bool
	OnWhite        string // the colour's contrast with white, "5.2"
	Button         bool   // buttons wear the colour
	ButtonDarkText bool   // with dark text rather than white
	Text           bool   // links and headings wear it
}

// advice reads what brand.Palette decides for a colour.
func advice(color string) adviceView {
	v := adviceView{Color: color}
	c, err := brand.ParseColor(color)
	if err != nil {
		return v
	}
	v.Valid = true
	white, _ := brand.ParseColor(brand.White)
	v.OnWhite = strconv.FormatFloat(brand.Contrast(c, white), 'f', 1, 64)
	p := brand.Brand{Color: color}.Palette()
	v.Button = strings.EqualFold(p.Button, c.String())
	v.ButtonDarkText = v.Button && strings.EqualFold(p.ButtonText, brand.Ink)
	v.Text = strings.EqualFold(p.Text, c.String())
	return v
}

func (h settingsPages) settingsView(w http.ResponseWriter, r *http.Request, p Person) (settingsView, bool) {
	ctx := r.Context()
	acc, err := h.opts.Accounts.Account(ctx, p.AccountID)
	if err != nil {
		h.fail(w, r, err)
		return settingsView{}, false
	}
	v := settingsView{Brand: acc.Brand(), Roles: people.Roles(), Groups: []string{auth.GroupFull, auth.GroupEvents, auth.GroupReadonly},
		ClientGroup: auth.GroupEvents, PersonRole: string(people.Viewer), Me: p.ID,
		CanBrand: h.opts.Allows(p.Role, EditBranding), CanSettings: h.opts.Allows(p.Role, EditSettings),
		CanClients: h.opts.Allows(p.Role, ManageClients), CanPeople: h.opts.Allows(p.Role, ManagePeople)}
	v.Advice = advice(v.Brand.Color)
	v.CanLanguage, v.Language = h.opts.PeopleStore != nil, p.Language
	v.LanguageCodes = append([]string{""}, locale.Names(h.views.Texts)...)
	v.LanguageNames = []string{h.translator(r)("language_browser")}
	for _, l := range v.LanguageCodes[1:] {
		v.LanguageNames = append(v.LanguageNames, h.views.Texts[l]["language_name"])
	}
	settings, _, err := h.opts.Accounts.ListInviteSettings(ctx, p.AccountID, accountdb.InviteSettingFilter{}, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return settingsView{}, false
	}
	ets, _, err := h.opts.Accounts.ListEventTypes(ctx, p.AccountID, accountdb.EventTypeFilter{}, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return settingsView{}, false
	}
	chs, _, err := h.opts.Accounts.ListChannels(ctx, p.AccountID, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return settingsView{}, false
	}
	names := map[string]string{}
	for _, et := range ets {
		names[et.ID] = et.Name
	}
	for _, ch := range chs {
		names[ch.ID] = ch.Name
	}
	for _, s := range settings {
		v.Settings = append(v.Settings, inviteSettingRow{InviteSetting: s, EventType: names[s.EventTypeID], Channel: names[s.ChannelID]})
	}
	// Clients and people are the owners' business: others do not read
	// their list.
	if v.CanClients && h.opts.Clients != nil {
		if v.Clients, err = h.opts.Clients.ListClients(ctx, p.AccountID); err != nil {
			h.fail(w, r, err)
			return settingsView{}, false
		}
	}
	if v.CanPeople && h.opts.PeopleStore != nil {
		if v.People, err = h.opts.PeopleStore.People(ctx, p.AccountID); err != nil {
			h.fail(w, r, err)
			return settingsView{}, false
		}
	}
	return v, true
}

func (h settingsPages) settings(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.settingsView(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "settings", "settings_title", "settings", v)
}

// refused shows the settings again with the problems of a form.
func (h settingsPages) refused(w http.ResponseWriter, r *http.Request, v settingsView) {
	h.render(w, r, http.StatusBadRequest, "settings", "settings_title", "settings", v)
}

// brandingAdvice is the contrast advice for the colour being typed, as a
// piece of the settings page (the script puts it in place).
func (h settingsPages) brandingAdvice(w http.ResponseWriter, r *http.Request, p Person) {
	h.renderPart(w, r, "settings", "advice", advice(strings.TrimSpace(r.URL.Query().Get("color"))))
}

// saveBranding stores the shop's name, logo, colour and reply address.
func (h settingsPages) saveBranding(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.settingsView(w, r, p)
	if !ok {
		return
	}
	t := h.translator(r)
	f := r.PostForm
	b := brand.Brand{DisplayName: strings.TrimSpace(f.Get("displayName")), LogoURL: strings.TrimSpace(f.Get("logoUrl")),
		Color: strings.ToUpper(strings.TrimSpace(f.Get("color"))), ReplyTo: strings.TrimSpace(f.Get("replyTo"))}
	check := func(field string, err error) {
		if err != nil {
			v.Errors.add(field, sayProblem(t, err))
		}
	}
	check("displayName", brand.ValidateDisplayName(b.DisplayName))
	if b.LogoURL != "" {
		check("logoUrl", brand.ValidateLogoURL(b.LogoURL))
	}
	if b.Color != "" {
		check("color", brand.ValidateColor(b.Color))
	}
	if b.ReplyTo != "" {
		check("replyTo", brand.ValidateReplyTo(b.ReplyTo))
	}
	if len(v.Errors) > 0 {
		v.Brand, v.Advice = b, advice(b.Color)
		h.refused(w, r, v)
		return
	}
	if _, err := h.opts.Accounts.UpdateBranding(r.Context(), p.AccountID, accountdb.BrandingUpdate{DisplayName: &b.DisplayName,
		LogoURL: &b.LogoURL, BrandColor: &b.Color, ReplyTo: &b.ReplyTo}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.seeOther(w, r, "/settings", "branding_saved")
}

// saveInviteSetting changes when an invite setting's invites go out.
func (h settingsPages) saveInviteSetting(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if !store.ValidID("ist", id) {
		h.notFound(w, r)
		return
	}
	t := h.translator(r)
	f := r.PostForm
	var errs fieldErrors
	apply := func(is *accountdb.InviteSetting) error {
		is.Active = f.Get("active") == "on"
		is.Delay = strings.TrimSpace(f.Get("delay"))
		if _, err := sendtime.ParseDuration(is.Delay); err != nil {
			errs.add("delay-"+id, sayProblem(t, err))
		}
		is.ReminderDelay = strings.TrimSpace(f.Get("reminder"))
		if is.ReminderDelay != "" {
			if _, err := sendtime.ParseReminderDelay(is.ReminderDelay); err != nil {
				errs.add("reminder-"+id, sayProblem(t, err))
			}
		}
		start, end, zone := strings.TrimSpace(f.Get("windowStart")), strings.TrimSpace(f.Get("windowEnd")), strings.TrimSpace(f.Get("windowTimeZone"))
		if start == "" && end == "" {
			is.SendWindow = nil
		} else {
			win := sendtime.SendWindow{Start: start, End: end, TimeZone: zone}
			if err := win.Validate(); err != nil {
				errs.add("windowStart-"+id, sayProblem(t, err))
			}
			is.SendWindow = &win
		}
		if len(errs) > 0 {
			return errSettingRefused
		}
		return nil
	}
	_, err := h.opts.Accounts.UpdateInviteSetting(r.Context(), p.AccountID, id, apply)
	if errors.Is(err, errSettingRefused) {
		v, ok := h.settingsView(w, r, p)
		if !ok {
			return
		}
		v.Errors, v.SettingID = errs, id
		h.refused(w, r, v)
		return
	}
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/settings#invites-h", "setting_saved")
}

var errSettingRefused = errors.New("the invite setting's form was refused")

// createClient makes an API client and shows its secret, once.
func (h settingsPages) createClient(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.settingsView(w, r, p)
	if !ok {
		return
	}
	if h.opts.Clients == nil || h.opts.NewClientSecret == nil {
		h.notFound(w, r)
		return
	}
	t := h.translator(r)
	v.ClientName, v.ClientGroup = strings.TrimSpace(r.PostForm.Get("name")), r.PostForm.Get("group")
	if v.ClientName == "" {
		v.Errors.add("client-name", t("error_required"))
	} else if text.Check(text.Name, v.ClientName) != nil {
		v.Errors.add("client-name", t("error_characters"))
	}
	if !auth.ValidGroup(v.ClientGroup) {
		v.Errors.add("client-group", t("error_choice"))
	}
	if len(v.Errors) > 0 {
		h.refused(w, r, v)
		return
	}
	secret, hash := h.opts.NewClientSecret()
	c, err := h.opts.Clients.CreateClient(r.Context(), p.AccountID, v.ClientName, v.ClientGroup, hash)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.Clients = append(v.Clients, c)
	v.NewClient, v.NewClientSecret, v.ClientName = &c, secret, ""
	h.render(w, r, http.StatusCreated, "settings", "settings_title", "settings", v)
}

// deleteClient revokes an API client: its tokens stop working.
func (h settingsPages) deleteClient(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if h.opts.Clients == nil {
		h.notFound(w, r)
		return
	}
	c, err := h.opts.Clients.Client(r.Context(), id)
	if err == nil && c.AccountID != p.AccountID {
		err = store.ErrNotFound
	}
	if err == nil {
		err = h.opts.Clients.DeleteClient(r.Context(), c.ID)
	}
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/settings#clients-h", "client_deleted")
}

// saveLanguage sets the console's language the person reads in: one of
// the console's, or "" for their browser's.
func (h settingsPages) saveLanguage(w http.ResponseWriter, r *http.Request, p Person) {
	if h.opts.PeopleStore == nil {
		h.notFound(w, r)
		return
	}
	lang := r.PostForm.Get("language")
	if lang != "" && h.views.Texts[lang] == nil {
		v, ok := h.settingsView(w, r, p)
		if !ok {
			return
		}
		v.Errors.add("language", h.translator(r)("error_choice"))
		h.refused(w, r, v)
		return
	}
	if _, err := h.opts.PeopleStore.SetLanguage(r.Context(), people.PersonActor(p.ID), p.AccountID, p.ID, lang); err != nil {
		h.fail(w, r, err)
		return
	}
	h.seeOther(w, r, "/settings#language-h", "language_saved")
}

// addPerson lets a person sign in to the account with a role.
func (h settingsPages) addPerson(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.settingsView(w, r, p)
	if !ok {
		return
	}
	if h.opts.PeopleStore == nil {
		h.notFound(w, r)
		return
	}
	t := h.translator(r)
	v.PersonEmail, v.PersonRole = r.PostForm.Get("email"), r.PostForm.Get("role")
	email, err := people.NormalizeEmail(v.PersonEmail)
	if err != nil {
		v.Errors.add("person-email", t("error_email"))
	}
	role, ok := people.ParseRole(v.PersonRole)
	if !ok {
		v.Errors.add("person-role", t("error_choice"))
	}
	if len(v.Errors) == 0 {
		_, err = h.opts.PeopleStore.CreatePerson(r.Context(), people.PersonActor(p.ID), p.AccountID, email, role)
		if errors.Is(err, store.ErrConflict) {
			v.Errors.add("person-email", t("error_person_exists"))
		} else if err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if len(v.Errors) > 0 {
		h.refused(w, r, v)
		return
	}
	h.seeOther(w, r, "/settings#people-h", "person_added")
}

// changePerson sets a person's role, or disables them (which ends their
// sessions at once).
func (h settingsPages) changePerson(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if h.opts.PeopleStore == nil || !store.ValidID(people.IDPrefix, id) || id == p.ID {
		h.notFound(w, r)
		return
	}
	by := people.PersonActor(p.ID)
	var err error
	done := "person_changed"
	if r.PostForm.Get("action") == "disable" {
		_, _, err = h.opts.PeopleStore.Disable(r.Context(), by, p.AccountID, id)
		done = "person_disabled"
	} else {
		role, ok := people.ParseRole(r.PostForm.Get("role"))
		if !ok {
			h.notFound(w, r)
			return
		}
		_, err = h.opts.PeopleStore.SetRole(r.Context(), by, p.AccountID, id, role)
	}
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/settings#people-h", done)
}
