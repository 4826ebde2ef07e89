-- The demo warehouse `shop`. Traps on purpose: undeclared joins (legacy_crm_notes), a foreign
-- key whose parent is not unique when read (sales_reps inherits its history), partial
-- shipments that fan out orders, and the same column names with different meanings.
DROP SCHEMA IF EXISTS shop CASCADE;
CREATE SCHEMA shop;

CREATE TABLE shop.regions (
    region_id   integer PRIMARY KEY,
    name        text NOT NULL,
    country     text NOT NULL
);
COMMENT ON TABLE shop.regions IS 'Sales and delivery regions.';

CREATE TABLE shop.sales_reps (
    rep_id      integer PRIMARY KEY,
    name        text NOT NULL,
    region_id   integer REFERENCES shop.regions (region_id),
    valid_from  date NOT NULL
);
COMMENT ON TABLE shop.sales_reps IS 'Current sales reps. Older versions of a rep live in sales_reps_history, which inherits this table: reading shop.sales_reps returns both.';

-- Inheritance: the primary key covers only the parent's own rows, so rep_id repeats when the
-- table is read (without ONLY) and the declared foreign key below joins many-to-many.
CREATE TABLE shop.sales_reps_history () INHERITS (shop.sales_reps);
COMMENT ON TABLE shop.sales_reps_history IS 'Superseded versions of sales reps (slowly changing dimension).';

CREATE TABLE shop.customers (
    customer_id integer PRIMARY KEY,
    name        text NOT NULL,
    email       text UNIQUE,
    region_id   integer REFERENCES shop.regions (region_id),
    rep_id      integer REFERENCES shop.sales_reps (rep_id),
    status      text NOT NULL,
    created_at  timestamptz NOT NULL
);
COMMENT ON COLUMN shop.customers.region_id IS 'Home region of the customer (not where orders ship).';
COMMENT ON COLUMN shop.customers.status IS 'active or churned';

CREATE TABLE shop.products (
    product_id       integer PRIMARY KEY,
    sku              text NOT NULL UNIQUE,
    name             text NOT NULL,
    category         text NOT NULL,
    list_price_cents integer NOT NULL,
    status           text NOT NULL
);

CREATE TABLE shop.orders (
    order_id    integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES shop.customers (customer_id),
    status      char(1) NOT NULL,
    amt         bigint NOT NULL,
    ordered_at  timestamptz NOT NULL
);
COMMENT ON COLUMN shop.orders.status IS 'P=pending, A=paid, S=shipped, C=cancelled';
COMMENT ON COLUMN shop.orders.amt IS 'Gross booking value in USD cents (before refunds).';

CREATE TABLE shop.order_items (
    order_item_id    integer PRIMARY KEY,
    order_id         integer NOT NULL REFERENCES shop.orders (order_id),
    product_id       integer NOT NULL REFERENCES shop.products (product_id),
    quantity         integer NOT NULL,
    unit_price_cents integer NOT NULL,
    amount_cents     integer NOT NULL
);

CREATE TABLE shop.shipments (
    shipment_id             integer PRIMARY KEY,
    order_id                integer NOT NULL REFERENCES shop.orders (order_id),
    region_id               integer NOT NULL REFERENCES shop.regions (region_id),
    status                  text NOT NULL,
    shipped_at              timestamptz NOT NULL,
    amount_recognized_cents bigint NOT NULL
);
COMMENT ON TABLE shop.shipments IS 'Partial shipments: an order ships in one or more parts. Recognized revenue lives here.';
COMMENT ON COLUMN shop.shipments.region_id IS 'Region the shipment was delivered to.';

CREATE TABLE shop.refunds (
    refund_id    integer PRIMARY KEY,
    order_id     integer NOT NULL REFERENCES shop.orders (order_id),
    amount_cents integer NOT NULL,
    status       text NOT NULL,
    refunded_at  timestamptz NOT NULL
);

-- Imported from the old CRM: no keys, no constraints, odd reference names.
CREATE TABLE shop.legacy_crm_notes (
    note_id   integer,
    cust_ref  integer,
    order_id  integer,
    prod_sku  text,
    author    text,
    body      text,
    created   date
);

CREATE VIEW shop.v_order_summary AS
SELECT o.order_id, o.customer_id, c.name AS customer_name, c.region_id, o.status, o.amt,
       o.ordered_at
FROM shop.orders o JOIN shop.customers c ON c.customer_id = o.customer_id;
COMMENT ON VIEW shop.v_order_summary IS 'One row per order with its customer.';
