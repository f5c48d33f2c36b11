// A Scala job (spark-shell): the plugin from --conf registered the service's catalogs; plain Spark SQL reads them.
val database = sys.env("HMS_DB")
val tables = spark.sql(s"SHOW TABLES IN conn.$database").collect().map(_.getString(1)).sorted
val rows = spark.sql(s"SELECT id, dt FROM conn.$database.pq WHERE hr = 2").collect().map(r => s"${r.getInt(0)}|${r.getString(1)}")
println("RESULT tables=" + tables.mkString(",") + " rows=" + rows.mkString(","))
System.exit(0)
