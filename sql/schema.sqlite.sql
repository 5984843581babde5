-- mod_agentshop schema for SQLite (3.35+). Idempotent: safe to run again.
-- Statements end with ';' at the end of a line (a CREATE TRIGGER with its line
-- 'END;'); bin/agentshopctl runs them one by one.
-- Money is integer cents. JSON values are stored as JSON text.

-- The schema's version, one row, written by agentshopctl init (AS_SCHEMA_VERSION
-- in sql/as_db.h; docs/storage.md, "Schema versions"). A database with our
-- tables but without this one is version 1.
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS merchants (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    country       TEXT NOT NULL CHECK (country IN ('NL', 'BE', 'DE')),
    city          TEXT NOT NULL,
    on_time_rate  REAL NOT NULL CHECK (on_time_rate BETWEEN 0 AND 1),
    accuracy_rate REAL NOT NULL CHECK (accuracy_rate BETWEEN 0 AND 1),
    withdrawn_at      TEXT  -- withdrawn from sale (a feed's withdrawal): NULL = sold
);

CREATE TABLE IF NOT EXISTS products (
    id                INTEGER PRIMARY KEY,
    sku               TEXT NOT NULL UNIQUE,
    gtin              TEXT,
    name              TEXT NOT NULL,
    brand             TEXT NOT NULL,
    category          TEXT NOT NULL,
    part_type         TEXT NOT NULL,
    description       TEXT NOT NULL,
    image_urls        TEXT NOT NULL,
    source_url        TEXT NOT NULL,
    source_notes      TEXT NOT NULL,
    source_checked_at TEXT NOT NULL,
    source_product_id TEXT NOT NULL,
    availability      TEXT NOT NULL CHECK (availability IN ('in_stock', 'out_of_stock')),
    is_demo           INTEGER NOT NULL DEFAULT 1,
    verif_status      TEXT NOT NULL CHECK (verif_status IN ('pending', 'verified', 'contradicted')),
    verif_note        TEXT,
    measured_at       TEXT,
    measured_node     TEXT,
    sample_size       INTEGER NOT NULL DEFAULT 0,
    on_time_rate_90d  REAL,
    return_rate       REAL NOT NULL,
    wrong_item_rate   REAL NOT NULL,
    agent_orders_90d  INTEGER NOT NULL,
    orders_per_week   TEXT NOT NULL,
    withdrawn_at      TEXT  -- NULL = sold; withdrawn: in no search or view, its orders intact
);
CREATE INDEX IF NOT EXISTS products_category ON products (category, part_type);
CREATE INDEX IF NOT EXISTS products_part_type ON products (part_type);

CREATE TABLE IF NOT EXISTS product_specs (
    product_id    INTEGER NOT NULL REFERENCES products (id),
    pos           INTEGER NOT NULL,
    spec          TEXT NOT NULL,
    label         TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('categorical', 'performance', 'info')),
    unit          TEXT,
    claimed       TEXT,
    measured      TEXT,
    tolerance_pct REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (product_id, pos)
);

CREATE TABLE IF NOT EXISTS offers (
    id                 TEXT PRIMARY KEY,
    product_id         INTEGER NOT NULL REFERENCES products (id),
    merchant_id        TEXT NOT NULL REFERENCES merchants (id),
    price_cents        INTEGER NOT NULL CHECK (price_cents > 0),
    retail_price_cents INTEGER NOT NULL CHECK (retail_price_cents > 0),
    price_label        TEXT NOT NULL,
    delivery_days      INTEGER NOT NULL CHECK (delivery_days >= 0),
    stock              INTEGER NOT NULL CHECK (stock >= 0),
    withdrawn_at       TEXT  -- NULL = sold; withdrawn: stock 0, never sold again
);
-- By product, with the id and stock: a search page's live stock is read
-- from this index alone, not from the table (schema version 4).
CREATE INDEX IF NOT EXISTS offers_product_stock ON offers (product_id, id, stock);
CREATE INDEX IF NOT EXISTS offers_merchant ON offers (merchant_id, product_id);

CREATE TABLE IF NOT EXISTS devices (
    id      INTEGER PRIMARY KEY,
    slug    TEXT NOT NULL UNIQUE,
    name    TEXT NOT NULL,
    brand   TEXT NOT NULL,
    kind    TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '',
    withdrawn_at TEXT  -- NULL = listed
);

CREATE TABLE IF NOT EXISTS compat (
    device_id  INTEGER NOT NULL REFERENCES devices (id),
    product_id INTEGER NOT NULL REFERENCES products (id),
    fit_status TEXT NOT NULL CHECK (fit_status IN ('fits', 'does_not_fit')),
    evidence   TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    PRIMARY KEY (device_id, product_id)
);
CREATE INDEX IF NOT EXISTS compat_product ON compat (product_id, fit_status);

CREATE TABLE IF NOT EXISTS questions (
    id         TEXT PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products (id),
    user_id    TEXT,
    question   TEXT NOT NULL,
    answer     TEXT NOT NULL,
    asked_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_product ON questions (product_id, asked_at);
CREATE INDEX IF NOT EXISTS questions_user ON questions (user_id, asked_at);

-- The version of each product's view: raised by every change to one of its
-- offers (stock) and every question asked about it, by triggers, so every
-- writer raises it in the writer's own transaction. It never goes back, so a
-- view cached at one version (the module keeps encoded product views per
-- process) is still true while the version is unchanged.
-- seq: the live sequence (meta live_seq, raised by the same triggers) at the
-- product's last change. Writers take turns on SQLite, so a larger seq is a
-- later commit: a search index that has read up to some seq reads only the
-- rows above it (as_live_changes) to know which products' stock or questions
-- moved since its build (docs/search.md, "The live sequence").
CREATE TABLE IF NOT EXISTS product_versions (
    product_id INTEGER PRIMARY KEY REFERENCES products (id),
    version    INTEGER NOT NULL,
    seq        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS product_versions_seq ON product_versions (seq);
-- (A statement ends at a line ending in ';': the trigger bodies keep theirs inside.)
CREATE TRIGGER IF NOT EXISTS offers_version AFTER UPDATE ON offers BEGIN
    INSERT INTO meta (key, value) VALUES ('live_seq', '1')
    ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; INSERT INTO
    product_versions (product_id, version, seq) VALUES (NEW.product_id, 1, (SELECT CAST(value AS
    INTEGER) FROM meta WHERE key = 'live_seq')) ON CONFLICT (product_id) DO UPDATE SET
    version = version + 1, seq = excluded.seq;
END;
CREATE TRIGGER IF NOT EXISTS questions_version AFTER INSERT ON questions BEGIN
    INSERT INTO meta (key, value) VALUES ('live_seq', '1')
    ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; INSERT INTO
    product_versions (product_id, version, seq) VALUES (NEW.product_id, 1, (SELECT CAST(value AS
    INTEGER) FROM meta WHERE key = 'live_seq')) ON CONFLICT (product_id) DO UPDATE SET
    version = version + 1, seq = excluded.seq;
END;

-- Search order under the default weights, one row per product: whether it can
-- be bought and its best offer's score, price and delivery days, the rank that
-- the search index in each httpd child (core/search/) takes for the product.
-- Written by the catalogue loader and, in the same transaction, by every write
-- that takes an offer's stock to or from zero; each such write raises the
-- search_rank version (meta) and gives it to the row, so an index reads only
-- the rows changed since its own version (docs/storage.md, "Search at scale").
CREATE TABLE IF NOT EXISTS product_rank (
    product_id  INTEGER PRIMARY KEY REFERENCES products (id),
    hidden      INTEGER NOT NULL,  -- 1: contradicted, left out while verified_only
    buyable     INTEGER NOT NULL,  -- 1: at least one offer can be bought
    score       INTEGER NOT NULL,  -- the best offer's score; 0 when not buyable
    price_cents INTEGER NOT NULL,  -- the best offer's unit price; 0 when not buyable
    days        INTEGER NOT NULL,  -- the best offer's delivery days; 0 when not buyable
    return_rate REAL NOT NULL,
    version     INTEGER NOT NULL DEFAULT 0  -- the search_rank (meta) of its last change
);
-- Rows changed since a search index last read them (as_rank_changes).
CREATE INDEX IF NOT EXISTS rank_version ON product_rank (version);

-- Agents, mandates and buying. Users are the people agents act for; they are
-- named by an id and need no table of their own.

CREATE TABLE IF NOT EXISTS agent_keys (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    key_hash   TEXT NOT NULL UNIQUE,  -- hex SHA-256 of the whole key; the key itself is never stored
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS agent_keys_user ON agent_keys (user_id);

CREATE TABLE IF NOT EXISTS mandates (
    id                    TEXT PRIMARY KEY,
    user_id               TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
    allowed_categories    TEXT NOT NULL,  -- comma separated category ids
    per_order_limit_cents INTEGER NOT NULL CHECK (per_order_limit_cents > 0),
    monthly_limit_cents   INTEGER NOT NULL CHECK (monthly_limit_cents > 0),
    confirm_above_cents   INTEGER NOT NULL CHECK (confirm_above_cents >= 0),
    valid_until           TEXT,           -- yyyy-mm-dd, last valid day; NULL = open-ended
    created_at            TEXT NOT NULL,
    revoked_at            TEXT
);
CREATE INDEX IF NOT EXISTS mandates_user ON mandates (user_id, status);

CREATE TABLE IF NOT EXISTS quotes (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    product_id       INTEGER NOT NULL REFERENCES products (id),
    offer_id         TEXT NOT NULL REFERENCES offers (id),
    quantity         INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 10),
    unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
    total_cents      INTEGER NOT NULL CHECK (total_cents > 0),
    delivery_days    INTEGER NOT NULL,
    delivery_by      TEXT NOT NULL,
    device_slug      TEXT,
    fit_status       TEXT,
    guarantee        INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS orders (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    mandate_id       TEXT NOT NULL REFERENCES mandates (id),
    quote_id         TEXT NOT NULL UNIQUE REFERENCES quotes (id),  -- a quote becomes at most one order
    offer_id         TEXT NOT NULL REFERENCES offers (id),
    quantity         INTEGER NOT NULL,
    unit_price_cents INTEGER NOT NULL,
    total_cents      INTEGER NOT NULL,
    budget_cents     INTEGER NOT NULL,  -- what the order holds of its month's budget now
    month            TEXT NOT NULL,     -- yyyy-mm (UTC) whose budget it uses
    reason           TEXT NOT NULL,
    agent            TEXT NOT NULL,     -- Service-Agent of the caller
    status           TEXT NOT NULL,
    confirm_expires_at INTEGER,         -- awaiting_confirmation until then
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    key_id           TEXT,              -- the agent key that placed it (NULL: before schema 4)
    -- what was bought, as the catalogue named it when the order was placed
    -- (schema 8): every view of the order shows these, whatever the feed
    -- renames later, and an approval checks the mandate against this category
    product_name     TEXT NOT NULL,
    category         TEXT NOT NULL,
    merchant_name    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_awaiting ON orders (mandate_id, status, confirm_expires_at);
CREATE INDEX IF NOT EXISTS orders_expiry ON orders (status, confirm_expires_at);
-- (orders_budget served the sum that mandate_spent below replaces)
DROP INDEX IF EXISTS orders_budget;

-- What a mandate's orders hold of a month's budget: SUM(budget_cents) of its
-- orders in that month, kept by the triggers below in the transaction that
-- changes an order, so an order reads the month's spending from one row.
-- agentshopctl init builds it again when it disagrees with the orders.
CREATE TABLE IF NOT EXISTS mandate_spent (
    mandate_id TEXT NOT NULL,
    month      TEXT NOT NULL,
    cents      INTEGER NOT NULL,
    PRIMARY KEY (mandate_id, month)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS orders_spent_insert AFTER INSERT ON orders BEGIN
    INSERT INTO mandate_spent (mandate_id, month, cents)
    VALUES (NEW.mandate_id, NEW.month, NEW.budget_cents)
    ON CONFLICT (mandate_id, month) DO UPDATE SET cents = cents + excluded.cents;
END;
CREATE TRIGGER IF NOT EXISTS orders_spent_update
AFTER UPDATE OF mandate_id, month, budget_cents ON orders
WHEN OLD.budget_cents <> NEW.budget_cents OR OLD.mandate_id <> NEW.mandate_id
    OR OLD.month <> NEW.month BEGIN
    UPDATE mandate_spent SET cents = cents - OLD.budget_cents
    WHERE mandate_id = OLD.mandate_id AND month = OLD.month;
    INSERT INTO mandate_spent (mandate_id, month, cents)
    VALUES (NEW.mandate_id, NEW.month, NEW.budget_cents)
    ON CONFLICT (mandate_id, month) DO UPDATE SET cents = cents + excluded.cents;
END;
CREATE TRIGGER IF NOT EXISTS orders_spent_delete AFTER DELETE ON orders BEGIN
    UPDATE mandate_spent SET cents = cents - OLD.budget_cents
    WHERE mandate_id = OLD.mandate_id AND month = OLD.month;
END;

CREATE TABLE IF NOT EXISTS order_events (
    order_id TEXT NOT NULL REFERENCES orders (id),
    seq      INTEGER NOT NULL,
    status   TEXT NOT NULL,
    at       INTEGER NOT NULL,
    note     TEXT,
    PRIMARY KEY (order_id, seq)
);

CREATE TABLE IF NOT EXISTS confirmations (
    id         TEXT PRIMARY KEY,
    order_id   TEXT NOT NULL UNIQUE REFERENCES orders (id),
    user_id    TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined', 'expired', 'cancelled')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_at INTEGER
);

-- Passkeys of the people behind mandates (WebAuthn), which approve orders
-- above the confirm-above threshold (docs/security.md). Schema 4.
CREATE TABLE IF NOT EXISTS passkeys (
    id         TEXT PRIMARY KEY,       -- the credential id, base64url
    user_id    TEXT NOT NULL,
    alg        INTEGER NOT NULL,          -- COSE: -7 ES256, -8 Ed25519, -257 RS256
    public_key TEXT NOT NULL,          -- SubjectPublicKeyInfo (DER), base64url
    sign_count INTEGER NOT NULL,          -- the authenticator's counter last seen
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS passkeys_user ON passkeys (user_id);

-- One-time enrolment links (agentshopctl user enrol): the token only as a hash.
CREATE TABLE IF NOT EXISTS enrolments (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    token_hash TEXT NOT NULL,          -- hex SHA-256 of the link's token
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);

-- WebAuthn challenges, each for one enrolment or one confirmation, used once.
CREATE TABLE IF NOT EXISTS webauthn_challenges (
    challenge  TEXT PRIMARY KEY,       -- 32 random bytes, base64url
    purpose    TEXT NOT NULL CHECK (purpose IN ('enrol', 'approve')),
    subject_id TEXT NOT NULL,          -- the enrolment's or the confirmation's id
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX IF NOT EXISTS webauthn_challenges_age ON webauthn_challenges (expires_at);
-- One challenge per subject and expiry: expiries fall on whole steps
-- (core/api/as_passkey_api.c), so a subject has at most two live ones.
CREATE UNIQUE INDEX IF NOT EXISTS webauthn_challenges_slot
    ON webauthn_challenges (subject_id, purpose, expires_at);

-- Idempotency-Key records, per user and endpoint, kept at least 24 hours.
CREATE TABLE IF NOT EXISTS idempotency (
    user_id      TEXT NOT NULL,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    status       INTEGER,
    response     TEXT,
    created_at   INTEGER NOT NULL,
    lease_until  INTEGER NOT NULL,  -- an in-flight claim older than this may be taken over
    PRIMARY KEY (user_id, scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_age ON idempotency (created_at);

-- Returns: at most one per order.
CREATE TABLE IF NOT EXISTS returns (
    id             TEXT PRIMARY KEY,
    order_id       TEXT NOT NULL UNIQUE REFERENCES orders (id),
    user_id        TEXT NOT NULL,
    reason_code    TEXT NOT NULL CHECK (reason_code IN ('wrong_item', 'does_not_fit', 'defective',
                                                        'damaged_in_transit', 'no_longer_needed')),
    note           TEXT,
    refund_status  TEXT NOT NULL CHECK (refund_status IN ('refunded', 'pending_inspection')),
    refund_cents   INTEGER NOT NULL CHECK (refund_cents >= 0),
    carrier        TEXT NOT NULL,
    tracking_code  TEXT NOT NULL,
    replacement_sku TEXT,
    created_at     INTEGER NOT NULL
);
