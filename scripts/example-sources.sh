#!/usr/bin/env bash
# Creates the small tables and procedures that the data-source examples of README.md,
# docs/sources.md and docs/rest.md use: docs_sales.invoices and the function
# docs_sales.invoices_of in PostgreSQL (database test), docs_crm.customers, docs_crm.orders and
# the procedure docs_crm.orders_of in MariaDB.
# Run it again to start over: it drops and recreates both. Needs psql and the mariadb client.
#   PGHOST/PGPORT/PGUSER/PGDATABASE and MARIADB_HOST/MARIADB_PORT/MARIADB_USER override the
#   defaults (127.0.0.1, 5432, postgres, test; 127.0.0.1, 3306, root).
set -euo pipefail

psql -v ON_ERROR_STOP=1 -q -h "${PGHOST:-127.0.0.1}" -p "${PGPORT:-5432}" -U "${PGUSER:-postgres}" -d "${PGDATABASE:-test}" <<'SQL'
DROP SCHEMA IF EXISTS docs_sales CASCADE;
CREATE SCHEMA docs_sales;
CREATE TABLE docs_sales.invoices (
  id int PRIMARY KEY,
  customer_id int NOT NULL,
  amount numeric(10,2) NOT NULL,
  issued_on date NOT NULL,
  status text NOT NULL
);
INSERT INTO docs_sales.invoices VALUES
  (1, 1, 120.00, '2025-01-15', 'paid'),
  (2, 1, 80.50, '2025-03-02', 'paid'),
  (3, 2, 45.00, '2025-02-11', 'open'),
  (4, 3, 310.25, '2025-04-20', 'paid'),
  (5, 4, 99.99, '2024-12-30', 'paid'),
  (6, 5, 15.00, '2025-05-05', 'paid'),
  (7, 6, 230.00, '2025-06-18', 'void'),
  (8, 7, 64.10, '2025-07-01', 'paid'),
  (9, 8, 500.00, '2025-07-09', 'paid'),
  (10, 3, 42.42, '2025-08-14', 'open');
-- Statistics for the estimates EXPLAIN shows (docs/sql.md).
ANALYZE docs_sales.invoices;
-- A procedure of the source (docs/rest.md, Procedures).
CREATE FUNCTION docs_sales.invoices_of(customer int, min_amount numeric DEFAULT 0)
  RETURNS TABLE (id int, amount numeric(10,2), issued_on date, status text)
  LANGUAGE sql STABLE
  AS $$ SELECT i.id, i.amount, i.issued_on, i.status FROM docs_sales.invoices i
        WHERE i.customer_id = customer AND i.amount >= min_amount ORDER BY i.id $$;
SQL

mariadb -h "${MARIADB_HOST:-127.0.0.1}" -P "${MARIADB_PORT:-3306}" -u "${MARIADB_USER:-root}" <<'SQL'
DROP DATABASE IF EXISTS docs_crm;
CREATE DATABASE docs_crm;
CREATE TABLE docs_crm.customers (
  id int PRIMARY KEY,
  name varchar(100) NOT NULL,
  country char(2) NOT NULL,
  tier varchar(10) NOT NULL,
  vip bit(1) NOT NULL,
  profile json,
  created_at datetime NOT NULL
);
INSERT INTO docs_crm.customers VALUES
  (1, 'Lukas Müller', 'DE', 'gold', 1, '{"newsletter":true}', '2024-03-01 09:30:00'),
  (2, 'Chiara Ferrari', 'IT', 'silver', 0, NULL, '2024-04-12 14:00:00'),
  (3, 'Emma Smith', 'US', 'gold', 1, '{"newsletter":false,"score":12345678901234567890}', '2024-05-20 08:15:00'),
  (4, 'Hiroshi Tanaka', 'JP', 'silver', 0, NULL, '2024-06-02 11:00:00'),
  (5, 'Sofia Rossi', 'IT', 'gold', 0, '{"newsletter":true}', '2024-06-30 16:45:00'),
  (6, 'Noah Johnson', 'US', 'bronze', 0, NULL, '2024-07-14 10:20:00'),
  (7, 'Anna Kowalska', 'PL', 'gold', 1, NULL, '2024-08-08 09:05:00'),
  (8, 'Mateo García', 'ES', 'gold', 0, '{"newsletter":false}', '2024-09-19 13:30:00');
CREATE TABLE docs_crm.orders (
  id int PRIMARY KEY,
  customer_id int NOT NULL,
  total decimal(10,2) NOT NULL
);
INSERT INTO docs_crm.orders VALUES
  (1, 1, 59.90), (2, 1, 120.00), (3, 3, 15.50), (4, 2, 89.00), (5, 7, 230.10), (6, 5, 12.00), (7, 3, 44.44);
CREATE PROCEDURE docs_crm.orders_of(IN customer INT) READS SQL DATA
  SELECT id, total FROM docs_crm.orders WHERE customer_id = customer ORDER BY id;
SQL

echo "docs_sales.invoices and invoices_of (PostgreSQL), docs_crm.customers, orders and orders_of (MariaDB) are ready."
