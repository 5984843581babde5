-- mod_agentshop schema for PostgreSQL (13+). Idempotent: safe to run again.
-- The same tables and columns as schema.sqlite.sql. Statements end with ';' at
-- the end of a line, outside $$ bodies; bin/agentshopctl runs them one by one.

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
    on_time_rate  DOUBLE PRECISION NOT NULL CHECK (on_time_rate BETWEEN 0 AND 1),
    accuracy_rate DOUBLE PRECISION NOT NULL CHECK (accuracy_rate BETWEEN 0 AND 1)
);

CREATE TABLE IF NOT EXISTS products (
    id                BIGINT PRIMARY KEY,
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
    on_time_rate_90d  DOUBLE PRECISION,
    return_rate       DOUBLE PRECISION NOT NULL,
    wrong_item_rate   DOUBLE PRECISION NOT NULL,
    agent_orders_90d  INTEGER NOT NULL,
    orders_per_week   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS products_category ON products (category, part_type);
CREATE INDEX IF NOT EXISTS products_part_type ON products (part_type);

CREATE TABLE IF NOT EXISTS product_specs (
    product_id    BIGINT NOT NULL REFERENCES products (id),
    pos           INTEGER NOT NULL,
    spec          TEXT NOT NULL,
    label         TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('categorical', 'performance', 'info')),
    unit          TEXT,
    claimed       TEXT,
    measured      TEXT,
    tolerance_pct DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (product_id, pos)
);

CREATE TABLE IF NOT EXISTS offers (
    id                 TEXT PRIMARY KEY,
    product_id         BIGINT NOT NULL REFERENCES products (id),
    merchant_id        TEXT NOT NULL REFERENCES merchants (id),
    price_cents        BIGINT NOT NULL CHECK (price_cents > 0),
    retail_price_cents BIGINT NOT NULL CHECK (retail_price_cents > 0),
    price_label        TEXT NOT NULL,
    delivery_days      INTEGER NOT NULL CHECK (delivery_days >= 0),
    stock              BIGINT NOT NULL CHECK (stock >= 0)
);
-- By product, with the id and stock: a search page's live stock is read
-- from this index alone, not from the table (schema version 4).
CREATE INDEX IF NOT EXISTS offers_product_stock ON offers (product_id, id, stock);
CREATE INDEX IF NOT EXISTS offers_merchant ON offers (merchant_id, product_id);

CREATE TABLE IF NOT EXISTS devices (
    id      BIGINT PRIMARY KEY,
    slug    TEXT NOT NULL UNIQUE,
    name    TEXT NOT NULL,
    brand   TEXT NOT NULL,
    kind    TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS compat (
    device_id  BIGINT NOT NULL REFERENCES devices (id),
    product_id BIGINT NOT NULL REFERENCES products (id),
    fit_status TEXT NOT NULL CHECK (fit_status IN ('fits', 'does_not_fit')),
    evidence   TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    PRIMARY KEY (device_id, product_id)
);
CREATE INDEX IF NOT EXISTS compat_product ON compat (product_id, fit_status);

CREATE TABLE IF NOT EXISTS questions (
    id         TEXT PRIMARY KEY,
    product_id BIGINT NOT NULL REFERENCES products (id),
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
-- seq: the live sequence (meta live_seq) of the transaction that last changed
-- the product, in commit order, as on SQLite (docs/storage.md, "Search at
-- scale"): a search index that has read up to some seq reads only the rows
-- above it. PostgreSQL's writers run side by side and a sequence's numbers
-- come in start order, so the number is taken at commit: a deferred trigger
-- (product_live_raise) raises live_seq once per transaction, the first time
-- it fires, and holds that row's lock until the commit is done; the next
-- writer's number is drawn after it, so a larger number is a later commit.
-- Writers of stock wait on each other only for the commit itself, and only
-- that one lock is taken there, after all the others: no deadlock.
CREATE TABLE IF NOT EXISTS product_versions (
    product_id BIGINT PRIMARY KEY REFERENCES products (id),
    version    BIGINT NOT NULL,
    seq        BIGINT NOT NULL DEFAULT 0
);
ALTER TABLE product_versions ADD COLUMN IF NOT EXISTS seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS product_versions_seq ON product_versions (seq);
-- (A statement ends at a line ending in ';': the function bodies keep theirs inside.)
CREATE OR REPLACE FUNCTION product_version_raise() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO product_versions (product_id, version) VALUES (NEW.product_id, 1)
    ON CONFLICT (product_id) DO UPDATE SET version = product_versions.version + 1; RETURN NULL; END $$;
CREATE OR REPLACE TRIGGER offers_version AFTER UPDATE ON offers
    FOR EACH ROW EXECUTE FUNCTION product_version_raise();
CREATE OR REPLACE TRIGGER questions_version AFTER INSERT ON questions
    FOR EACH ROW EXECUTE FUNCTION product_version_raise();
-- The transaction's number, kept in a setting local to it (agentshop.live_seq)
-- so that its other rows take the same one.
CREATE OR REPLACE FUNCTION product_live_raise() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n BIGINT := NULLIF(current_setting('agentshop.live_seq', true), ''); BEGIN
    IF n IS NULL THEN INSERT INTO meta (key, value) VALUES ('live_seq', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)
        RETURNING CAST(value AS BIGINT) INTO n; PERFORM set_config('agentshop.live_seq', CAST(n AS TEXT), true)
    ; END IF; UPDATE product_versions SET seq = n WHERE product_id = NEW.product_id AND seq <> n
    ; RETURN NULL; END $$;
-- (Constraint triggers cannot be replaced: made again.)
DROP TRIGGER IF EXISTS offers_live ON offers;
CREATE CONSTRAINT TRIGGER offers_live AFTER UPDATE ON offers DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION product_live_raise();
DROP TRIGGER IF EXISTS questions_live ON questions;
CREATE CONSTRAINT TRIGGER questions_live AFTER INSERT ON questions DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION product_live_raise();

-- Search order under the default weights, one row per product: whether it can
-- be bought and its best offer's score, price and delivery days, the rank that
-- the search index in each httpd child (core/search/) takes for the product.
-- Written by the catalogue loader and, in the same transaction, by every write
-- that takes an offer's stock to or from zero; each such write raises the
-- search_rank version (meta) and gives it to the row, so an index reads only
-- the rows changed since its own version (docs/storage.md, "Search at scale").
CREATE TABLE IF NOT EXISTS product_rank (
    product_id  BIGINT PRIMARY KEY REFERENCES products (id),
    hidden      INTEGER NOT NULL,  -- 1: contradicted, left out while verified_only
    buyable     INTEGER NOT NULL,  -- 1: at least one offer can be bought
    score       INTEGER NOT NULL,  -- the best offer's score; 0 when not buyable
    price_cents INTEGER NOT NULL,  -- the best offer's unit price; 0 when not buyable
    days        INTEGER NOT NULL,  -- the best offer's delivery days; 0 when not buyable
    return_rate DOUBLE PRECISION NOT NULL,
    version     BIGINT NOT NULL DEFAULT 0  -- the search_rank (meta) of its last change
);
-- A database from before the rank version: its rows get one (SQLite: migration step 2).
ALTER TABLE product_rank ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0;
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
    per_order_limit_cents BIGINT NOT NULL CHECK (per_order_limit_cents > 0),
    monthly_limit_cents   BIGINT NOT NULL CHECK (monthly_limit_cents > 0),
    confirm_above_cents   BIGINT NOT NULL CHECK (confirm_above_cents >= 0),
    valid_until           TEXT,           -- yyyy-mm-dd, last valid day; NULL = open-ended
    created_at            TEXT NOT NULL,
    revoked_at            TEXT
);
CREATE INDEX IF NOT EXISTS mandates_user ON mandates (user_id, status);

CREATE TABLE IF NOT EXISTS quotes (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    product_id       BIGINT NOT NULL REFERENCES products (id),
    offer_id         TEXT NOT NULL REFERENCES offers (id),
    quantity         INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 10),
    unit_price_cents BIGINT NOT NULL CHECK (unit_price_cents > 0),
    total_cents      BIGINT NOT NULL CHECK (total_cents > 0),
    delivery_days    INTEGER NOT NULL,
    delivery_by      TEXT NOT NULL,
    device_slug      TEXT,
    fit_status       TEXT,
    guarantee        INTEGER NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS orders (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    mandate_id       TEXT NOT NULL REFERENCES mandates (id),
    quote_id         TEXT NOT NULL UNIQUE REFERENCES quotes (id),  -- a quote becomes at most one order
    offer_id         TEXT NOT NULL REFERENCES offers (id),
    quantity         INTEGER NOT NULL,
    unit_price_cents BIGINT NOT NULL,
    total_cents      BIGINT NOT NULL,
    budget_cents     BIGINT NOT NULL,  -- what the order holds of its month's budget now
    month            TEXT NOT NULL,     -- yyyy-mm (UTC) whose budget it uses
    reason           TEXT NOT NULL,
    agent            TEXT NOT NULL,     -- Service-Agent of the caller
    status           TEXT NOT NULL,
    confirm_expires_at BIGINT,         -- awaiting_confirmation until then
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    key_id           TEXT,              -- the agent key that placed it (NULL: before schema 4)
    -- what was bought, as the catalogue named it when the order was placed
    -- (schema 8): every view of the order shows these, whatever the feed
    -- renames later, and an approval checks the mandate against this category
    product_name     TEXT NOT NULL,
    category         TEXT NOT NULL,
    merchant_name    TEXT NOT NULL
);
ALTER TABLE orders ADD COLUMN IF NOT EXISTS key_id TEXT;
CREATE INDEX IF NOT EXISTS orders_awaiting ON orders (mandate_id, status, confirm_expires_at);
CREATE INDEX IF NOT EXISTS orders_expiry ON orders (status, confirm_expires_at);
-- (orders_budget served the sum that mandate_spent below replaces)
DROP INDEX IF EXISTS orders_budget;

-- What a mandate's orders hold of a month's budget: SUM(budget_cents) of its
-- orders in that month, kept by the trigger below in the transaction that
-- changes an order, so an order reads the month's spending from one row.
-- agentshopctl init builds it again when it disagrees with the orders.
CREATE TABLE IF NOT EXISTS mandate_spent (
    mandate_id TEXT NOT NULL,
    month      TEXT NOT NULL,
    cents      BIGINT NOT NULL,
    PRIMARY KEY (mandate_id, month)
);
CREATE OR REPLACE FUNCTION orders_spent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.budget_cents = NEW.budget_cents
       AND OLD.mandate_id = NEW.mandate_id AND OLD.month = NEW.month THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        UPDATE mandate_spent SET cents = cents - OLD.budget_cents
        WHERE mandate_id = OLD.mandate_id AND month = OLD.month;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO mandate_spent (mandate_id, month, cents)
        VALUES (NEW.mandate_id, NEW.month, NEW.budget_cents)
        ON CONFLICT (mandate_id, month) DO UPDATE SET cents = mandate_spent.cents + EXCLUDED.cents;
    END IF;
    RETURN NULL;
END
$$;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'orders_spent_row') THEN
        CREATE TRIGGER orders_spent_row AFTER INSERT OR DELETE OR UPDATE OF mandate_id, month, budget_cents
        ON orders FOR EACH ROW EXECUTE FUNCTION orders_spent();
    END IF;
END
$$;

CREATE TABLE IF NOT EXISTS order_events (
    order_id TEXT NOT NULL REFERENCES orders (id),
    seq      INTEGER NOT NULL,
    status   TEXT NOT NULL,
    at       BIGINT NOT NULL,
    note     TEXT,
    PRIMARY KEY (order_id, seq)
);

CREATE TABLE IF NOT EXISTS confirmations (
    id         TEXT PRIMARY KEY,
    order_id   TEXT NOT NULL UNIQUE REFERENCES orders (id),
    user_id    TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined', 'expired', 'cancelled')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_at BIGINT
);

-- Passkeys of the people behind mandates (WebAuthn), which approve orders
-- above the confirm-above threshold (docs/security.md). Schema 4.
CREATE TABLE IF NOT EXISTS passkeys (
    id         TEXT PRIMARY KEY,       -- the credential id, base64url
    user_id    TEXT NOT NULL,
    alg        BIGINT NOT NULL,          -- COSE: -7 ES256, -8 Ed25519, -257 RS256
    public_key TEXT NOT NULL,          -- SubjectPublicKeyInfo (DER), base64url
    sign_count BIGINT NOT NULL,          -- the authenticator's counter last seen
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS passkeys_user ON passkeys (user_id);

-- One-time enrolment links (agentshopctl user enrol): the token only as a hash.
CREATE TABLE IF NOT EXISTS enrolments (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    token_hash TEXT NOT NULL,          -- hex SHA-256 of the link's token
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);

-- WebAuthn challenges, each for one enrolment or one confirmation, used once.
CREATE TABLE IF NOT EXISTS webauthn_challenges (
    challenge  TEXT PRIMARY KEY,       -- 32 random bytes, base64url
    purpose    TEXT NOT NULL CHECK (purpose IN ('enrol', 'approve')),
    subject_id TEXT NOT NULL,          -- the enrolment's or the confirmation's id
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
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
    created_at   BIGINT NOT NULL,
    lease_until  BIGINT NOT NULL,  -- an in-flight claim older than this may be taken over
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
    refund_cents   BIGINT NOT NULL CHECK (refund_cents >= 0),
    carrier        TEXT NOT NULL,
    tracking_code  TEXT NOT NULL,
    replacement_sku TEXT,
    created_at     BIGINT NOT NULL
);

-- Schema version 7: withdrawals (agentshopctl catalogue import, docs/catalogue.md).
-- NULL = sold or listed; a time = withdrawn then: in no search, view or device
-- list, while the orders and returns that name it keep their rows.
ALTER TABLE merchants ADD COLUMN IF NOT EXISTS withdrawn_at TEXT;
ALTER TABLE products ADD COLUMN IF NOT EXISTS withdrawn_at TEXT;
ALTER TABLE offers ADD COLUMN IF NOT EXISTS withdrawn_at TEXT;
ALTER TABLE devices ADD COLUMN IF NOT EXISTS withdrawn_at TEXT;
