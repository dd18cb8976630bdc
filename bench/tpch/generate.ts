/**
 * A deterministic TPC-H data generator, written from the specification's rules (clause 4.2):
 * the eight tables at a scale factor, their cardinalities, key rules and value domains. Every row
 * is a function of the table and the row's number (a seeded PRNG per row), so a table streams in
 * any chunking without holding anything, and orders and lineitem agree (an order's lines are
 * drawn again from the same seed when its total price is needed).
 *
 * Simplified against the specification, on purpose:
 *   - comments are slices of a text pool made by a small grammar over the specification's word
 *     lists (the pool is made once, 1 MiB), as the specification's own generator does with a
 *     larger pool and a fuller grammar;
 *   - the suppliers with "Customer ... Complaints" / "Customer ... Recommends" comments are
 *     chosen by a rule on the key (about SF*5 of each), not drawn;
 *   - addresses are random strings of letters, digits, commas and spaces.
 *
 * Rows are TSV lines in PostgreSQL's COPY text format (also what MariaDB's LOAD DATA reads by
 * default): no value contains a tab, newline or backslash.
 *
 *   node dist/bench/tpch/generate.js <table> [sf]     writes a table to stdout
 */
import { pathToFileURL } from 'node:url';

export const TABLES = ['region', 'nation', 'supplier', 'part', 'partsupp', 'customer', 'orders', 'lineitem'] as const;
export type TableName = (typeof TABLES)[number];

/** Bumped whenever the generated values change: loaded data of another version is loaded again. */
export const GENERATOR_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// Random numbers: mulberry32, seeded per row from (table seed, row number).

class Rng {
  private state = 0;
  seed(stream: number, row: number): this {
    let h = (Math.imul(stream, 0x9e3779b1) ^ Math.imul(row + 1, 0x85ebca6b)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
    h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
    this.state = (h ^ (h >>> 16)) | 0;
    return this;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)]!;
  }
}

/** One seed stream per use, so a value's draw never shifts when another's changes. */
const STREAM = {
  pool: 1,
  region: 2,
  nation: 3,
  supplier: 4,
  part: 5,
  partsupp: 6,
  customer: 7,
  order: 8,
  orderComment: 9,
  lineComment: 10,
} as const;

// ---------------------------------------------------------------------------------------------
// Value domains (clause 4.2.2 / 4.2.3)

export const REGIONS = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'];
/** [name, regionkey]; the nation key is the position. */
export const NATIONS: ReadonlyArray<readonly [string, number]> = [
  ['ALGERIA', 0],
  ['ARGENTINA', 1],
  ['BRAZIL', 1],
  ['CANADA', 1],
  ['EGYPT', 4],
  ['ETHIOPIA', 0],
  ['FRANCE', 3],
  ['GERMANY', 3],
  ['INDIA', 2],
  ['INDONESIA', 2],
  ['IRAN', 4],
  ['IRAQ', 4],
  ['JAPAN', 2],
  ['JORDAN', 4],
  ['KENYA', 0],
  ['MOROCCO', 0],
  ['MOZAMBIQUE', 0],
  ['PERU', 1],
  ['CHINA', 2],
  ['ROMANIA', 3],
  ['SAUDI ARABIA', 4],
  ['VIETNAM', 2],
  ['RUSSIA', 3],
  ['UNITED KINGDOM', 3],
  ['UNITED STATES', 1],
];

/** The 92 words of part names (P_NAME is five distinct ones). */
const COLORS = (
  'almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished chartreuse chiffon ' +
  'chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick floral forest frosted gainsboro ghost ' +
  'goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn lemon light lime linen magenta maroon medium ' +
  'metallic midnight mint misty moccasin navajo navy olive orange orchid pale papaya peach peru pink plum powder puff ' +
  'purple red rose rosy royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato ' +
  'turquoise violet wheat white yellow'
).split(' ');

const TYPE_1 = ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'];
const TYPE_2 = ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'];
const TYPE_3 = ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'];
const CONTAINER_1 = ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'];
const CONTAINER_2 = ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'];
const SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'];
const PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'];
const INSTRUCTIONS = ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'];
const MODES = ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'];

// ---------------------------------------------------------------------------------------------
// Dates: day numbers from 1992-01-01, formatted from a table.

const DAY_MS = 86_400_000;
const EPOCH = Date.UTC(1992, 0, 1);
const dayOf = (iso: string) => Math.round((Date.parse(`${iso}T00:00:00Z`) - EPOCH) / DAY_MS);
const END_DAY = dayOf('1998-12-31');
/** Orders are dated so that every line ships, and is received, by the end date. */
const LAST_ORDER_DAY = END_DAY - 151;
const CURRENT_DAY = dayOf('1995-06-17');
const DATES: string[] = [];
for (let d = 0; d <= END_DAY + 200; d++) DATES.push(new Date(EPOCH + d * DAY_MS).toISOString().slice(0, 10));

// ---------------------------------------------------------------------------------------------
// Text: a pool made by a grammar (clause 4.2.2.10's word lists), comments are slices of it.

const NOUNS = (
  'foxes ideas theodolites pinto beans instructions dependencies excuses platelets asymptotes courts dolphins multipliers ' +
  'sauternes warthogs frets dinos attainments somas Tiresias patterns forges braids hockey players frays warhorses dugouts ' +
  'notornis epitaphs pearls tithes waters orbits gifts sheaves depths sentiments decoys realms pains grouches escapades'
).split(' ');
/** Nouns the specification weights far above the others. */
const COMMON_NOUNS = ['packages', 'requests', 'accounts', 'deposits', 'foxes', 'ideas', 'theodolites', 'instructions'];
const VERBS = (
  'sleep wake are cajole haggle nag use boost affix detect integrate maintain nod was lose sublate solve thrash promise ' +
  'engage hinder print x-ray breach eat grow impress mold poach serve run dazzle snooze doze unwind kindle play hang believe doubt'
).split(' ');
const ADJECTIVES = (
  'furious sly careful blithe quick fluffy slow quiet ruthless thin close dogged daring brave stealthy permanent enticing ' +
  'idle busy regular final ironic even bold silent special pending unusual express'
).split(' ');
const ADVERBS = (
  'sometimes always never furiously slyly carefully blithely quickly fluffily slowly quietly ruthlessly thinly closely ' +
  'doggedly daringly bravely stealthily permanently enticingly idly busily regularly finally ironically evenly boldly silently'
).split(' ');
const PREPOSITIONS = (
  'about|above|according to|across|after|against|along|alongside of|among|around|at|atop|before|behind|beneath|beside|' +
  'besides|between|beyond|by|despite|during|except|for|from|in place of|inside|instead of|into|near|of|on|outside|over|' +
  'past|since|through|throughout|to|toward|under|until|up|upon|without|with|within'
).split('|');
const AUXILIARIES = 'do|may|might|shall|will|would|can|could|should|ought to|must|will have to|need to|try to'.split('|');
const TERMINATORS = ['.', ';', ':', '?', '!', '--'];

function nounPhrase(rng: Rng): string {
  const noun = rng.next() < 0.5 ? rng.pick(COMMON_NOUNS) : rng.pick(NOUNS);
  switch (rng.int(0, 3)) {
    case 0:
      return noun;
    case 1:
      return `${rng.pick(ADJECTIVES)} ${noun}`;
    case 2:
      return `${rng.pick(ADJECTIVES)}, ${rng.pick(ADJECTIVES)} ${noun}`;
    default:
      return `${rng.pick(ADVERBS)} ${rng.pick(ADJECTIVES)} ${noun}`;
  }
}

function verbPhrase(rng: Rng): string {
  const verb = rng.pick(VERBS);
  switch (rng.int(0, 3)) {
    case 0:
      return verb;
    case 1:
      return `${rng.pick(AUXILIARIES)} ${verb}`;
    case 2:
      return `${verb} ${rng.pick(ADVERBS)}`;
    default:
      return `${rng.pick(AUXILIARIES)} ${verb} ${rng.pick(ADVERBS)}`;
  }
}

function sentence(rng: Rng): string {
  const prep = () => `${rng.pick(PREPOSITIONS)} the ${nounPhrase(rng)}`;
  switch (rng.int(0, 4)) {
    case 0:
      return `${nounPhrase(rng)} ${verbPhrase(rng)}${rng.pick(TERMINATORS)}`;
    case 1:
      return `${nounPhrase(rng)} ${verbPhrase(rng)} ${prep()}${rng.pick(TERMINATORS)}`;
    case 2:
      return `${nounPhrase(rng)} ${verbPhrase(rng)} ${nounPhrase(rng)}${rng.pick(TERMINATORS)}`;
    case 3:
      return `${nounPhrase(rng)} ${prep()} ${verbPhrase(rng)} ${nounPhrase(rng)}${rng.pick(TERMINATORS)}`;
    default:
      return `${nounPhrase(rng)} ${prep()} ${verbPhrase(rng)} ${prep()}${rng.pick(TERMINATORS)}`;
  }
}

const POOL_SIZE = 1 << 20;
let pool: string | null = null;
function textPool(): string {
  if (pool === null) {
    const rng = new Rng().seed(STREAM.pool, 0);
    const parts: string[] = [];
    let size = 0;
    while (size < POOL_SIZE + 256) {
      const s = sentence(rng);
      parts.push(s);
      size += s.length + 1;
    }
    pool = parts.join(' ');
  }
  return pool;
}

/** A comment: a slice of the pool of a length uniform in [min, max]. */
function comment(rng: Rng, min: number, max: number): string {
  const text = textPool();
  const length = rng.int(min, max);
  const start = rng.int(0, POOL_SIZE - 1);
  return text.slice(start, start + length);
}

// ---------------------------------------------------------------------------------------------
// Scaled quantities

export interface Scale {
  sf: number;
  suppliers: number;
  parts: number;
  customers: number;
  orders: number;
  clerks: number;
}

export function scale(sf: number): Scale {
  if (!(sf > 0)) throw new Error(`scale factor must be positive, not ${sf}`);
  const n = (base: number) => Math.max(1, Math.round(base * sf));
  return { sf, suppliers: n(10_000), parts: n(200_000), customers: n(150_000), orders: n(1_500_000), clerks: n(1_000) };
}

/** Rows of every table but lineitem (whose count follows from the orders' draws: lineitemCount). */
export function rowCount(table: Exclude<TableName, 'lineitem'>, s: Scale): number {
  switch (table) {
    case 'region':
      return 5;
    case 'nation':
      return 25;
    case 'supplier':
      return s.suppliers;
    case 'part':
      return s.parts;
    case 'partsupp':
      return s.parts * 4;
    case 'customer':
      return s.customers;
    case 'orders':
      return s.orders;
  }
}

// ---------------------------------------------------------------------------------------------
// Formatting

const pad9 = (n: number) => String(n).padStart(9, '0');
/** Integer cents as a decimal with two digits. */
function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789, ';
function address(rng: Rng): string {
  const length = rng.int(10, 40);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[rng.int(0, ALPHABET.length - 1)];
  return out;
}
const phone = (rng: Rng, nation: number) => `${nation + 10}-${rng.int(100, 999)}-${rng.int(100, 999)}-${rng.int(1000, 9999)}`;

// ---------------------------------------------------------------------------------------------
// Keys shared between tables

/** P_RETAILPRICE in cents, a function of the part key (clause 4.2.3). */
export const retailCents = (partkey: number) => 90_000 + (Math.floor(partkey / 10) % 20_001) + 100 * (partkey % 1_000);

/** The i-th (0..3) supplier of a part (clause 4.2.3, PS_SUPPKEY). */
export function partSupplier(partkey: number, i: number, suppliers: number): number {
  return ((partkey + i * (Math.floor(suppliers / 4) + Math.floor((partkey - 1) / suppliers))) % suppliers) + 1;
}

/** Order keys are sparse: the first 8 of every 32 (clause 4.2.3). */
export const orderKey = (index: number) => Math.floor(index / 8) * 32 + (index % 8) + 1;

interface Line {
  partkey: number;
  suppkey: number;
  quantity: number;
  extendedCents: number;
  discount: number;
  tax: number;
  ship: number;
  commit: number;
  receipt: number;
  returnflag: string;
  linestatus: string;
  instruct: string;
  mode: string;
}

interface Order {
  key: number;
  custkey: number;
  date: number;
  priority: string;
  clerk: number;
  lines: Line[];
}

/** An order and its lines, from the order's seed (both tables draw them the same way). */
function order(rng: Rng, index: number, s: Scale): Order {
  rng.seed(STREAM.order, index);
  // Customers whose key is a multiple of 3 place no orders (clause 4.2.3).
  const k = rng.int(0, Math.floor((s.customers * 2) / 3) - 1);
  const custkey = Math.floor(k / 2) * 3 + (k % 2) + 1;
  const date = rng.int(0, LAST_ORDER_DAY);
  const priority = rng.pick(PRIORITIES);
  const clerk = rng.int(1, s.clerks);
  const count = rng.int(1, 7);
  const lines: Line[] = [];
  for (let n = 0; n < count; n++) {
    const partkey = rng.int(1, s.parts);
    const suppkey = partSupplier(partkey, rng.int(0, 3), s.suppliers);
    const quantity = rng.int(1, 50);
    const discount = rng.int(0, 10);
    const tax = rng.int(0, 8);
    const ship = date + rng.int(1, 121);
    const commit = date + rng.int(30, 90);
    const receipt = ship + rng.int(1, 30);
    const returned = rng.next() < 0.5 ? 'R' : 'A';
    lines.push({
      partkey,
      suppkey,
      quantity,
      extendedCents: quantity * retailCents(partkey),
      discount,
      tax,
      ship,
      commit,
      receipt,
      returnflag: receipt <= CURRENT_DAY ? returned : 'N',
      linestatus: ship > CURRENT_DAY ? 'O' : 'F',
      instruct: rng.pick(INSTRUCTIONS),
      mode: rng.pick(MODES),
    });
  }
  return { key: orderKey(index), custkey, date, priority, clerk, lines };
}

/** Lines of all orders at a scale (draws the orders, formats nothing). */
export function lineitemCount(s: Scale): number {
  const rng = new Rng();
  let lines = 0;
  for (let i = 0; i < s.orders; i++) {
    rng.seed(STREAM.order, i);
    // The same draws as order(), up to the line count.
    rng.next();
    rng.next();
    rng.next();
    rng.next();
    lines += rng.int(1, 7);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Rows

/** The table's rows as TSV lines (each ending in a newline), in key order. */
export function* rows(table: TableName, s: Scale): Generator<string> {
  const rng = new Rng();
  const text = new Rng();
  switch (table) {
    case 'region':
      for (let r = 0; r < REGIONS.length; r++) {
        rng.seed(STREAM.region, r);
        yield `${r}\t${REGIONS[r]}\t${comment(rng, 31, 115)}\n`;
      }
      return;
    case 'nation':
      for (let n = 0; n < NATIONS.length; n++) {
        rng.seed(STREAM.nation, n);
        yield `${n}\t${NATIONS[n]![0]}\t${NATIONS[n]![1]}\t${comment(rng, 31, 114)}\n`;
      }
      return;
    case 'supplier':
      for (let key = 1; key <= s.suppliers; key++) {
        rng.seed(STREAM.supplier, key);
        const nation = rng.int(0, 24);
        const addr = address(rng);
        const tel = phone(rng, nation);
        const acct = rng.int(-99_999, 999_999);
        yield `${key}\tSupplier#${pad9(key)}\t${addr}\t${nation}\t${tel}\t${money(acct)}\t${supplierComment(rng, key)}\n`;
      }
      return;
    case 'part':
      for (let key = 1; key <= s.parts; key++) {
        rng.seed(STREAM.part, key);
        const words: string[] = [];
        while (words.length < 5) {
          const w = rng.pick(COLORS);
          if (!words.includes(w)) words.push(w);
        }
        const m = rng.int(1, 5);
        const brand = `Brand#${m}${rng.int(1, 5)}`;
        const type = `${rng.pick(TYPE_1)} ${rng.pick(TYPE_2)} ${rng.pick(TYPE_3)}`;
        const size = rng.int(1, 50);
        const container = `${rng.pick(CONTAINER_1)} ${rng.pick(CONTAINER_2)}`;
        yield `${key}\t${words.join(' ')}\tManufacturer#${m}\t${brand}\t${type}\t${size}\t${container}\t${money(retailCents(key))}\t${comment(rng, 5, 22)}\n`;
      }
      return;
    case 'partsupp':
      for (let key = 1; key <= s.parts; key++) {
        for (let i = 0; i < 4; i++) {
          rng.seed(STREAM.partsupp, key * 4 + i);
          const qty = rng.int(1, 9_999);
          const cost = rng.int(100, 100_000);
          yield `${key}\t${partSupplier(key, i, s.suppliers)}\t${qty}\t${money(cost)}\t${comment(rng, 49, 198)}\n`;
        }
      }
      return;
    case 'customer':
      for (let key = 1; key <= s.customers; key++) {
        rng.seed(STREAM.customer, key);
        const nation = rng.int(0, 24);
        const addr = address(rng);
        const tel = phone(rng, nation);
        const acct = rng.int(-99_999, 999_999);
        const segment = rng.pick(SEGMENTS);
        yield `${key}\tCustomer#${pad9(key)}\t${addr}\t${nation}\t${tel}\t${money(acct)}\t${segment}\t${comment(rng, 29, 116)}\n`;
      }
      return;
    case 'orders':
      for (let i = 0; i < s.orders; i++) {
        const o = order(rng, i, s);
        let total = 0;
        let shipped = 0;
        for (const l of o.lines) {
          total += Math.round((l.extendedCents * (100 - l.discount) * (100 + l.tax)) / 10_000);
          if (l.linestatus === 'F') shipped++;
        }
        const status = shipped === o.lines.length ? 'F' : shipped === 0 ? 'O' : 'P';
        text.seed(STREAM.orderComment, i);
        yield `${o.key}\t${o.custkey}\t${status}\t${money(total)}\t${DATES[o.date]}\t${o.priority}\tClerk#${pad9(o.clerk)}\t0\t${comment(text, 19, 78)}\n`;
      }
      return;
    case 'lineitem':
      for (let i = 0; i < s.orders; i++) {
        const o = order(rng, i, s);
        text.seed(STREAM.lineComment, i);
        let out = '';
        o.lines.forEach((l, n) => {
          out +=
            `${o.key}\t${l.partkey}\t${l.suppkey}\t${n + 1}\t${l.quantity}.00\t${money(l.extendedCents)}\t${money(l.discount)}\t${money(l.tax)}\t` +
            `${l.returnflag}\t${l.linestatus}\t${DATES[l.ship]}\t${DATES[l.commit]}\t${DATES[l.receipt]}\t${l.instruct}\t${l.mode}\t${comment(text, 10, 43)}\n`;
        });
        yield out;
      }
      return;
  }
}

/**
 * S_COMMENT: about SF*5 suppliers carry "Customer ... Complaints" and as many "Customer ...
 * Recommends" (clause 4.2.3), at a random place of a comment of 25..100 characters.
 */
function supplierComment(rng: Rng, key: number): string {
  const base = comment(rng, 25, 100);
  const mark = (key * 7_919) % 2_000;
  const word = mark === 1 ? 'Complaints' : mark === 2 ? 'Recommends' : null;
  if (word === null) return base;
  const middle = comment(rng, 0, 20);
  const room = Math.max(0, 100 - 'Customer '.length - middle.length - word.length);
  const head = base.slice(0, rng.int(0, Math.min(room, base.length)));
  const tail = base.slice(head.length, head.length + room - head.length);
  return `${head}Customer ${middle}${word}${tail}`;
}

/** Rows joined into chunks of about `bytes` characters: fewer, larger writes. */
export function* chunks(table: TableName, s: Scale, bytes = 1 << 16): Generator<string> {
  let buffer = '';
  for (const row of rows(table, s)) {
    buffer += row;
    if (buffer.length >= bytes) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer.length > 0) yield buffer;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = process.argv[2] as TableName;
  if (!TABLES.includes(table)) {
    process.stderr.write(`usage: generate.js <${TABLES.join('|')}> [sf]\n`);
    process.exit(2);
  }
  const s = scale(Number(process.argv[3] ?? 0.01));
  for (const chunk of chunks(table, s)) process.stdout.write(chunk);
}
