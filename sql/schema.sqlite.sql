-- mod_agentshop schema for SQLite (3.35+ with FTS5). Idempotent: safe to run again.
-- Statements end with ';' at the end of a line; bin/agentshopctl runs them one by one.
-- Money is integer cents. JSON values are stored as JSON text.

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
    accuracy_rate REAL NOT NULL CHECK (accuracy_rate BETWEEN 0 AND 1)
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
    orders_per_week   TEXT NOT NULL
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
    stock              INTEGER NOT NULL CHECK (stock >= 0)
);
CREATE INDEX IF NOT EXISTS offers_product ON offers (product_id);
CREATE INDEX IF NOT EXISTS offers_merchant ON offers (merchant_id, product_id);

CREATE TABLE IF NOT EXISTS devices (
    id      INTEGER PRIMARY KEY,
    slug    TEXT NOT NULL UNIQUE,
    name    TEXT NOT NULL,
    brand   TEXT NOT NULL,
    kind    TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT ''
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

-- Full-text index over name, brand and description (external content: rebuilt
-- by the loader after each catalogue load; the catalogue is written only there).
CREATE VIRTUAL TABLE IF NOT EXISTS product_fts USING fts5 (
    name, brand, description,
    content = 'products', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
