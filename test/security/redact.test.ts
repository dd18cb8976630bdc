import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSecrets } from '../../src/security/redact.js';

test('secrets in statements are replaced, everything else kept', () => {
  assert.equal(
    redactSecrets("CALL SYSADMIN.createConnection('c', 'mysql', 'host=h,user-name=u,password=p\\,w,port=1', 'token=t')"),
    "CALL SYSADMIN.createConnection('c', '***', '***', '***')",
  );
  assert.equal(redactSecrets('SELECT 1'), 'SELECT 1');
  assert.equal(redactSecrets("CALL SYSADMIN.addUser('bob', 'it''s secret')"), "CALL SYSADMIN.addUser('bob', '***')");
  assert.equal(redactSecrets("call sysadmin.changeUserPwd(name => 'bob', password => 'x')"), "call sysadmin.changeUserPwd(name => 'bob', password => '***')");
  assert.equal(redactSecrets("x 'db.password = abc'"), "x 'db.password = ***'");
});
