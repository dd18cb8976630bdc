// A JDBC client of vdb's PostgreSQL listener, compiled and run by test/pgwire/jdbc.test.ts.
import java.sql.*;
public class WireProbe {
  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/vdb";
    try (Connection c = DriverManager.getConnection(url, args[1], args[2])) {
      System.out.println("product " + c.getMetaData().getDatabaseProductVersion());
      try (PreparedStatement ps = c.prepareStatement("SELECT id, name, created_at FROM shop.customers WHERE id = ?")) {
        for (int round = 0; round < 6; round++) {
          ps.setLong(1, 2);
          try (ResultSet rs = ps.executeQuery()) { while (rs.next()) System.out.println("row " + rs.getLong(1) + " " + rs.getString(2) + " " + rs.getDate(3)); }
        }
      }
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.setFetchSize(3);
        int n = 0;
        try (ResultSet rs = st.executeQuery("SELECT x FROM generate_series(1, 10) AS t(x)")) { while (rs.next()) n += rs.getInt(1); }
        System.out.println("sum " + n);
      }
      c.commit();
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1.5::numeric AS n, true AS b, 2.5::float8 AS f, TIMESTAMP '2024-01-02 03:04:05' AS t")) {
        rs.next();
        System.out.println("types " + rs.getBigDecimal(1) + " " + rs.getBoolean(2) + " " + rs.getDouble(3) + " " + rs.getTimestamp(4));
      }
    }
  }
}
