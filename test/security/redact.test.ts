import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSecrets } from '../../src/catalog/redact.js';

test('secrets in statements are replaced, everything else kept', () => {
  assert.equal(
    redactSecrets("CALL SYSADMIN.createConnection('c', 'mysql', 'host=h,user-name=u,password=p\\,w,port=1', 'token=t')"),
    "CALL SYSADMIN.createConnection('***', '***', '***', '***')",
  );
  assert.equal(redactSecrets('SELECT 1'), 'SELECT 1');
  assert.equal(redactSecrets("CALL SYSADMIN.addUser('bob', 'it''s secret')"), "CALL SYSADMIN.addUser('***', '***')");
  assert.equal(
    redactSecrets("call sysadmin.changeUserPwd(password => 'x', name => 'bob')"),
    "call sysadmin.changeUserPwd(password => '***', name => '***')",
  );
  assert.equal(redactSecrets("/* note */ CALL SYSADMIN.addUser('g', $$dollar-secret$$)"), "/* note */ CALL SYSADMIN.addUser('***', '***')");
  assert.equal(redactSecrets("CALL SYSADMIN.addUser('g', $x$a$b$x$)"), "CALL SYSADMIN.addUser('***', '***')");
  assert.equal(redactSecrets("-- why\nCALL SYSADMIN.addUser('g', 'pw')"), "-- why\nCALL SYSADMIN.addUser('***', '***')");
  assert.equal(redactSecrets("SELECT 'please call me'"), "SELECT 'please call me'");
  assert.equal(redactSecrets("x 'db.password = abc'"), "x 'db.password = ***'");
});
