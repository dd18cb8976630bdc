// DatabaseMetaData through vdb's PostgreSQL listener, compiled and run by test/pgwire/jdbc.test.ts:
// prints the schemas, tables, columns and primary keys the driver reads from pg_catalog.
import java.sql.*;
public class MetadataProbe {
  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/vdb";
    try (Connection c = DriverManager.getConnection(url, args[1], args[2])) {
      DatabaseMetaData md = c.getMetaData();
      try (ResultSet rs = md.getSchemas()) { while (rs.next()) System.out.println("schema " + rs.getString("TABLE_SCHEM")); }
      try (ResultSet rs = md.getTables(null, null, "%", new String[] { "TABLE", "VIEW" })) {
        while (rs.next()) System.out.println("table " + rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE") + " " + rs.getString("REMARKS"));
      }
      try (ResultSet rs = md.getColumns(null, "shop", "customers", "%")) {
        while (rs.next()) System.out.println("column " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getInt("DATA_TYPE") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("ORDINAL_POSITION") + " " + rs.getString("IS_NULLABLE"));
      }
      try (ResultSet rs = md.getPrimaryKeys(null, "shop", "customers")) {
        while (rs.next()) System.out.println("key " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getInt("KEY_SEQ") + " " + rs.getString("PK_NAME"));
      }
    }
  }
}
